package io.gosched.service.workload;

import java.time.Instant;

import io.gosched.context.Context;
import io.gosched.service.job.spi.JobRecord;
import tools.jackson.databind.JsonNode;

/**
 * The work of a job that is one call out of the runtime rather than a workload of steps: an
 * HTTP target's call, an application's handler. A job of such a kind runs as a workload of one
 * {@link Step.Call} step, so it is claimed, run as a goroutine, timed out, cancelled, retried
 * and recorded exactly as every other job.
 *
 * <p>Implementations are immutable and thread-safe: one task may run again on every attempt.
 */
public interface Task {

    /**
     * Runs the call in the attempt's main goroutine; returns when it ended or {@code call}'s
     * context did. It parks, not blocks, while it waits (or hands its P off as a syscall would).
     */
    Outcome run(Call call);

    /**
     * The job's kind as its record keeps it: {@code http} for an HTTP target's call,
     * {@code handler:NAME} for an application's handler. A node runs a job only if it can parse
     * a task of its kind again.
     */
    String kind();

    /**
     * What the task knows of the attempt it runs in.
     *
     * @param jobId    the job's id: the same on every attempt, what a target deduplicates by
     * @param attempt  the attempt's number, 1 for the first
     * @param context  cancelled by DELETE, the job's deadline or the service's shutdown
     * @param progress   takes the attempt's progress reports (the last one wins; see {@code JobRecord.Report})
     */
    record Call(String jobId, int attempt, Context context, java.util.function.Consumer<JobRecord.Report> progress) {

        /** A call whose progress reports go nowhere. */
        public Call(String jobId, int attempt, Context context) {
            this(jobId, attempt, context, r -> { });
        }
    }

    /** How the call ended. */
    sealed interface Outcome {

        /** It succeeded; {@code result} is the job's result. */
        record Done(JsonNode result) implements Outcome {}

        /**
         * It failed.
         *
         * @param error      why, as the job's error says it
         * @param retryable  whether the job's retry policy may try again (false: the job fails now)
         * @param notBefore  the earliest the next attempt may start (a target's Retry-After), or null
         * @param result     what came back even so (a target's error answer), kept as the job's result; or null
         */
        record Failed(String error, boolean retryable, Instant notBefore, JsonNode result) implements Outcome {}

        /** The context ended first: the job's cancel or deadline decides its state. */
        record Cancelled() implements Outcome {}
    }
}
