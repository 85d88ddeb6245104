package io.gosched.service.http;

import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.JsonInput;
import io.gosched.service.workload.Task;
import tools.jackson.databind.JsonNode;

/**
 * HTTP-target jobs as a kind of job: the {@code "http"} member of a job body read into a
 * {@link Task} that makes the call on each attempt. Thread-safe.
 */
public final class HttpJobs {

    private final HttpCallParser parser;
    private final HttpCaller caller;
    private final long maxBodyBytes;

    /**
     * @param maxBodyBytes  the most of an answer's body one job keeps: its share of the memory
     *                      budget (the smaller of it and {@code max-response-bytes} applies)
     */
    public HttpJobs(HttpCallParser parser, HttpCaller caller, long maxBodyBytes) {
        this.parser = parser;
        this.caller = caller;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** HTTP jobs switched off (no target allowed): every one is refused, naming the property. */
    public static HttpJobs off() {
        HttpJobProperties p = HttpJobProperties.defaults();
        return new HttpJobs(new HttpCallParser(new HttpTargets(p), p), null, 0);
    }

    /**
     * The call a job body's {@code "http"} member asks for, as the job's task; null with the
     * violations recorded in {@code in}.
     */
    public Task parse(JsonNode node, String pointer, long jobTimeoutMs, JsonInput in) {
        HttpCall call = parser.parse(node, pointer, jobTimeoutMs, in);
        return call == null ? null : new HttpTask(call);
    }

    /** One job's call, made again on every attempt. */
    private final class HttpTask implements Task {
        private final HttpCall call;

        HttpTask(HttpCall call) {
            this.call = call;
        }

        @Override
        public String kind() {
            return JobRecord.Spec.HTTP;
        }

        @Override
        public Outcome run(Call attempt) {
            if (caller == null) {
                return new Outcome.Failed("HTTP jobs are off on this node (" + HttpTargets.ALLOWED_TARGETS + " is empty)", false, null, null);
            }
            return switch (caller.call(call, attempt.jobId(), attempt.attempt(), attempt.context(), maxBodyBytes)) {
                case HttpOutcome.Succeeded s -> new Outcome.Done(s.result());
                case HttpOutcome.Failed f -> new Outcome.Failed(f.error(), f.retryable(), f.notBefore(), f.result());
                case HttpOutcome.Cancelled c -> new Outcome.Cancelled();
            };
        }
    }
}
