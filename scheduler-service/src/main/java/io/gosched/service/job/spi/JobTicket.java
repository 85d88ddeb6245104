package io.gosched.service.job.spi;

import java.time.Instant;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A job waiting to run, as the queue carries it: which job, which of its tickets, and when and
 * where it may run. Everything else about the job lives in its {@link JobRecord}.
 *
 * @param jobId      the job
 * @param number     the ticket's number, from 1: the record's {@link JobRecord.Status#ticket()} names the one
 *                   valid ticket, so an older one still in flight is recognisably stale
 * @param priority   {@value #MIN_PRIORITY} (lowest) to {@value #MAX_PRIORITY}; FIFO within a level
 * @param notBefore  the queue never hands the ticket out before this instant; null: at once
 * @param node       only this node may pull the ticket (a job whose shared channels live there); null: any node
 */
public record JobTicket(String jobId, long number, int priority, Instant notBefore, String node) {

    /** The lowest priority; the queue keeps one FIFO per level. */
    public static final int MIN_PRIORITY = 0;
    /** The highest priority. */
    public static final int MAX_PRIORITY = 9;

    /** What a node id may look like: it becomes a subject token and a consumer name. */
    public static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /** What a job id may look like: it becomes a subject token. */
    public static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    public JobTicket {
        Objects.requireNonNull(jobId, "jobId");
        if (!isToken(jobId)) {
            throw new IllegalArgumentException("job id must match " + JOB_ID + ": " + jobId);
        }
        if (number < 1) {
            throw new IllegalArgumentException("ticket number must be at least 1: " + number);
        }
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new IllegalArgumentException("priority must be between 0 and 9: " + priority);
        }
        if (node != null && !isToken(node)) {
            throw new IllegalArgumentException("node id must match " + NODE_ID + ": " + node);
        }
    }

    /**
     * True if {@code s} matches {@link #JOB_ID} (and {@link #NODE_ID}, the same pattern): checked
     * by hand because every ticket checks its id, and a regex match cost as much as the rest of
     * an embedded job's queueing.
     */
    public static boolean isToken(String s) {
        int n = s.length();
        if (n < 1 || n > 64) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** The first ticket of a job, issued at submission. */
    public static JobTicket first(String jobId, int priority, Instant notBefore) {
        return new JobTicket(jobId, 1, priority, notBefore, null);
    }

    /** The ticket after this one (a retry), due at {@code notBefore}. */
    public JobTicket next(Instant notBefore) {
        return new JobTicket(jobId, number + 1, priority, notBefore, node);
    }

    /** True if the ticket may not run yet at {@code now}. */
    public boolean isDelayed(Instant now) {
        return notBefore != null && notBefore.isAfter(now);
    }
}
