package io.gosched.service.job.spi;

import java.util.Locale;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The life of a job. Legal moves (one method, {@link Job#transition}, enforces them):
 * <pre>
 *   WAITING ──▶ QUEUED               (every job of its "after" succeeded: one CAS, its winner enqueues ticket 1)
 *     └──▶ CANCELLED                 (one of them ended otherwise or is gone, or DELETE)
 *   QUEUED ──▶ RUNNING ──▶ SUCCEEDED | FAILED | CANCELLED | TIMED_OUT
 *     │           │
 *     │           └──▶ QUEUED       (automatic retry after a back-off)
 *     └──▶ CANCELLED                (DELETE before it ran)
 *   FAILED | CANCELLED | TIMED_OUT ──▶ QUEUED   (POST .../retry; a job that waited does not wait again)
 * </pre>
 * A job submitted with {@code after} starts in WAITING, with no ticket in the queue; any other starts in QUEUED.
 */
public enum JobState {
    /** Waiting: in the priority queue, before its notBefore, or backing off between attempts. Owned by the queue. */
    QUEUED,
    /** Its goroutines run. Owned by the run's main goroutine, which alone moves it on. */
    RUNNING,
    /** Every goroutine ended and no step failed. Final unless retried... never: success is not retried. */
    SUCCEEDED,
    /** A step failed (the error names it by JSON pointer) and no attempt is left. */
    FAILED,
    /** DELETE /api/v1/jobs/{id}, or the service shut down. */
    CANCELLED,
    /** The job's deadline (timeoutMs) passed. */
    TIMED_OUT,
    /**
     * Submitted with {@code after}: stored, with no ticket in the queue, until every job it names has succeeded.
     * Declared last so that the ordinals of the older states stay as they were.
     */
    WAITING;

    @JsonValue
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean isFinal() {
        return this != QUEUED && this != RUNNING && this != WAITING;
    }

    /** Parses the lower-case wire name, or null. */
    public static JobState of(String s) {
        for (JobState st : values()) {
            if (st.json().equals(s)) {
                return st;
            }
        }
        return null;
    }

    /** True if the state machine above allows {@code this -> to}; stores of every kind check moves with it. */
    public boolean canMoveTo(JobState to) {
        return switch (this) {
            case WAITING -> to == QUEUED || to == CANCELLED;
            case QUEUED -> to == RUNNING || to == CANCELLED;
            case RUNNING -> to != RUNNING && to != WAITING;
            case SUCCEEDED -> false;
            case FAILED, CANCELLED, TIMED_OUT -> to == QUEUED;
        };
    }
}
