package io.gosched.service.job.spi;

import java.util.Locale;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The life of a job. Legal moves (one method, {@link Job#transition}, enforces them):
 * <pre>
 *   QUEUED ──▶ RUNNING ──▶ SUCCEEDED | FAILED | CANCELLED | TIMED_OUT
 *     │           │
 *     │           └──▶ QUEUED       (automatic retry after a back-off)
 *     └──▶ CANCELLED                (DELETE before it ran)
 *   FAILED | CANCELLED | TIMED_OUT ──▶ QUEUED   (POST .../retry)
 * </pre>
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
    TIMED_OUT;

    @JsonValue
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean isFinal() {
        return this != QUEUED && this != RUNNING;
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
            case QUEUED -> to == RUNNING || to == CANCELLED;
            case RUNNING -> to != RUNNING;
            case SUCCEEDED -> false;
            case FAILED, CANCELLED, TIMED_OUT -> to == QUEUED;
        };
    }
}
