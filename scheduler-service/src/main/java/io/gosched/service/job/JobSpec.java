package io.gosched.service.job;

import io.gosched.service.job.spi.JobTicket;
import java.time.Instant;

import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.workload.Step;
import io.gosched.service.workload.Workload;
import tools.jackson.databind.JsonNode;

/**
 * A validated job request.
 *
 * @param workload   what runs
 * @param template   the template's name when the job was submitted by template, else null
 * @param params     the template's parameters as sent, else null
 * @param timeoutMs  the deadline of each attempt
 * @param priority   0 (lowest) to 9 (highest); FIFO within a level
 * @param notBefore  earliest start, or null
 * @param retry      automatic retries after a failure or a timeout
 * @param name       a free label for people, or null
 * @param after      the jobs it waits for, as given (ids, or a batch's keys before they are resolved to ids); empty for none
 */
public record JobSpec(Workload workload, String template, JsonNode params, long timeoutMs, int priority, Instant notBefore,
        RetryPolicy retry, String name, java.util.List<String> after) {

    /** The most jobs one {@code after} may name. */
    public static final int MAX_AFTER = 100;

    public JobSpec {
        after = after == null ? java.util.List.of() : java.util.List.copyOf(after);
    }

    /** A spec without dependencies. */
    public JobSpec(Workload workload, String template, JsonNode params, long timeoutMs, int priority, Instant notBefore,
            RetryPolicy retry, String name) {
        this(workload, template, params, timeoutMs, priority, notBefore, retry, name, null);
    }

    /**
     * The job's kind as its record keeps it: {@value JobRecord.Spec#HTTP} for an HTTP-target job,
     * {@code handler:NAME} for a handler's, null for a workload or a template.
     */
    public String kind() {
        return workload != null && workload.steps().size() == 1 && workload.steps().getFirst() instanceof Step.Call c
                ? c.task().kind() : null;
    }

    public static final int MIN_PRIORITY = JobTicket.MIN_PRIORITY;
    public static final int MAX_PRIORITY = JobTicket.MAX_PRIORITY;
    public static final int DEFAULT_PRIORITY = 5;

    /**
     * Attempts in all (1 = no retry) and the back-off before attempt n+1:
     * {@code backoffMs * multiplier^(n-1)}, capped at {@code maxBackoffMs}.
     */
    public record RetryPolicy(int maxAttempts, long backoffMs, double multiplier, long maxBackoffMs) {
        public static final RetryPolicy NONE = new RetryPolicy(1, 0, 1.0, 0);

        long backoffBefore(int attempt) {
            double d = backoffMs * Math.pow(multiplier, Math.max(0, attempt - 2));
            return (long) Math.min(maxBackoffMs, d);
        }
    }
}
