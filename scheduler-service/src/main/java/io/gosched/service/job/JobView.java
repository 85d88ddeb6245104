package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Instant;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.swagger.v3.oas.annotations.media.Schema;
import tools.jackson.databind.JsonNode;

/**
 * A job as GET /api/v1/jobs/{id} shows it: a consistent snapshot.
 *
 * @param leakedGoroutines  how many of the job's goroutines (labelled {@code job=<id>}) the runtime found leaked:
 *                       blocked for ever on a channel, select or sync object nothing can reach any more
 *                       ({@code GET /api/v1/debug/goroutines/leaked} lists them); absent when none. Cluster
 *                       mode: known to the node that ran the leaking attempt only
 * @param attempt        the attempt running now, or the last one that ran (0 before the first)
 * @param maxAttempts    the highest attempt number the retry policy lets run without a manual retry: the policy's
 *                       attempts counted from the last manual retry, so never below {@code attempt}
 * @param startedAt      when the attempt running now started; absent while queued, also after a retry
 * @param maxGoroutines  what admission control reserved for one attempt
 * @param node           cluster mode: the node running the job now, or the one that ran it last; absent before
 *                       its first start and in embedded mode
 * @param result         only when succeeded: the last value a recv step took (null if none)
 * @param after          the jobs it waits for ({@code after}), with their states now; absent without
 * @param error          only when failed: the failing step's JSON pointer and why; reason {@code panic} when an
 *                       exception escaped one of the job's goroutines, its detail then names the goroutine and
 *                       the exception and holds the traceback of the job's goroutines (at most 64 KiB, said
 *                       when truncated)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record JobView(String id, JobState state, String name, String template, int priority, int attempt, int maxAttempts,
        long timeoutMs, Instant submittedAt, Instant notBefore, Instant queuedAt, Instant startedAt, Instant finishedAt,
        Long durationMs, Counters counters,
        @Schema(description = "How many of the job's goroutines the runtime found leaked (blocked for ever on a channel, select or sync"
                + " object nothing can reach; listed at /api/v1/debug/goroutines/leaked); absent when none. Cluster mode: known to the"
                + " node that ran the leaking attempt only", minimum = "1", nullable = true) Integer leakedGoroutines, long maxGoroutines, String node, Result result, Error error,
        @Schema(description = "The attempts that ended, oldest first (the last 20): number, node, start, end, outcome and error of "
                + "each; absent before the first ended") List<AttemptView> attempts,
        @Schema(description = "The jobs this one waits for or waited for (\"after\" at submission), in the order given, each with "
                + "its state now; absent for a job submitted without \"after\"") List<AfterView> after,
        @Schema(description = "The schedule whose tick made this job (POST /api/v1/schedules); absent for a job a client submitted",
                nullable = true) String schedule,
        @Schema(description = "The tick of its schedule this job is for; absent for a job a client submitted", nullable = true)
        Instant scheduledFor,
        @Schema(description = "Why a queued job cannot start now, when something it needs is missing: \"handler NAME\" for a"
                + " handler job whose handler no running node has (cluster mode; it starts once a node with the handler joins);"
                + " absent otherwise", nullable = true, example = "handler resize-image") String waitingFor,
        @Schema(description = "What the job's code last said of its progress (a handler's JobContext.progress): live while an"
                + " attempt runs (a few times a second at most), then the last report of the last attempt that made one, kept"
                + " after the job ends; absent when none was made", nullable = true) Progress progress) {

    /** How {@code waitingFor} starts for a handler job whose handler no running node has; the handler's name follows. */
    public static final String WAITING_FOR_HANDLER = "handler ";

    /** A view without dependencies. */
    public JobView(String id, JobState state, String name, String template, int priority, int attempt, int maxAttempts,
            long timeoutMs, Instant submittedAt, Instant notBefore, Instant queuedAt, Instant startedAt, Instant finishedAt,
            Long durationMs, Counters counters, Integer leakedGoroutines, long maxGoroutines, String node, Result result, Error error,
            List<AttemptView> attempts) {
        this(id, state, name, template, priority, attempt, maxAttempts, timeoutMs, submittedAt, notBefore, queuedAt, startedAt,
                finishedAt, durationMs, counters, leakedGoroutines, maxGoroutines, node, result, error, attempts, null, null, null, null,
                null);
    }

    /**
     * What the job's code last reported of its progress.
     *
     * @param fraction  how much is done, 0 to 1; absent when unknown
     * @param message   what it is doing (at most 200 characters); absent when none
     * @param at        when it was reported
     */
    @Schema(name = "JobProgress", requiredProperties = "at")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Progress(
            @Schema(description = "How much is done, 0 to 1; absent when unknown", minimum = "0", maximum = "1", nullable = true)
            Double fraction,
            @Schema(description = "What it is doing, at most 200 characters; absent when none", maxLength = 200, nullable = true)
            String message,
            @Schema(description = "When it was reported") Instant at) {}

    /**
     * One job of {@code after} and where it stands.
     *
     * @param state  its state's wire name, or {@code gone} when the store no longer holds it (removed by retention)
     */
    @Schema(name = "JobDependency")
    public record AfterView(String id, @Schema(allowableValues = {"waiting", "queued", "running", "succeeded", "failed", "cancelled",
            "timed_out", "gone"}) String state) {
        public static final String GONE = "gone";
    }

    /**
     * One attempt that ended.
     *
     * @param outcome  {@code succeeded}, {@code failed}, {@code timed_out}, {@code cancelled}, or {@code lost} (its
     *                 node stopped answering before it ended)
     */
    @Schema(name = "JobAttempt")
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record AttemptView(int number, String node, Instant startedAt, Instant finishedAt, Long durationMs,
            @Schema(allowableValues = {"succeeded", "failed", "timed_out", "cancelled", "lost"}) String outcome, Error error) {}

    /** Work done so far, all attempts added up; {@code liveGoroutines} is the current attempt's. */
    public record Counters(long goroutinesSpawned, long messagesSent, long messagesReceived, long stepsRun, int liveGoroutines) {}

    /**
     * The result of a succeeded job: {@code {"lastReceived": ...}} for a workload or a template
     * (what its last recv step took; JSON null when none), the target's answer
     * {@code {"status", "headers", "body"}} for an HTTP-target job.
     *
     * @param lastReceived  a workload's result
     * @param answer        an HTTP-target job's result, or null for a workload
     */
    @Schema(name = "JobResult", oneOf = {WorkloadResult.class, HttpResult.class})
    public record Result(JsonNode lastReceived, JsonNode answer) {

        public Result(JsonNode lastReceived) {
            this(lastReceived, null);
        }

        @com.fasterxml.jackson.annotation.JsonValue
        JsonNode json() {
            if (answer != null) {
                return answer;
            }
            tools.jackson.databind.node.ObjectNode o = tools.jackson.databind.node.JsonNodeFactory.instance.objectNode();
            o.set("lastReceived", lastReceived == null ? tools.jackson.databind.node.JsonNodeFactory.instance.nullNode() : lastReceived);
            return o;
        }
    }

    /** The result of a workload or template job, as the document describes it. */
    @Schema(name = "WorkloadResult", requiredProperties = "lastReceived")
    record WorkloadResult(@Schema(description = "What the job's last recv step took; null when it received nothing", nullable = true)
            JsonNode lastReceived) {}

    /** The result of an HTTP-target job, as the document describes it. */
    @Schema(name = "HttpResult", requiredProperties = {"status", "headers", "body"})
    record HttpResult(@Schema(description = "The target's status code (2xx)") int status,
            @Schema(description = "The answer's headers, names in lower case, repeated ones joined by \", \"")
            java.util.Map<String, String> headers,
            @Schema(description = "The answer's body: JSON when its Content-Type is JSON, else text; null when empty", nullable = true)
            JsonNode body) {}

    /**
     * Why a job failed.
     *
     * @param reason   {@code step} (a step failed; pointer names it), {@code timeout}, {@code refused} (the
     *                 runtime would not start it), {@code lost} (cluster mode: every node that took it died)
     *                 or {@code panic} (an exception escaped one of its goroutines; the detail holds the dump
     *                 of the job's goroutines)
     * @param pointer  the failing step's JSON pointer into the workload, "" for the job as a whole
     * @param detail   what happened, for people
     */
    @Schema(name = "JobError")
    public record Error(String reason, String pointer, String detail) {}
}
