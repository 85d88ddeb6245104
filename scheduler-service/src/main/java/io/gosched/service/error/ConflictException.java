package io.gosched.service.error;

import java.util.Objects;

/** What was asked contradicts the state of the thing it is about; {@link Reason} says how. */
public final class ConflictException extends ServiceException {

    /** Each kind of conflict, with its code (the last segment of the problem's type) and its title. */
    public enum Reason {
        /** An Idempotency-Key sent again with another request body. */
        IDEMPOTENCY_CONFLICT("idempotency-conflict", "Idempotency-Key reused"),
        /** The job moved while the request looked at it; asking again will do. */
        JOB_BUSY("job-busy", "Job changing state"),
        /** The job is final already (a cancel). */
        JOB_FINISHED("job-finished", "Job already finished"),
        /** Only a failed, cancelled or timed-out job runs again. */
        JOB_NOT_RETRYABLE("job-not-retryable", "Job cannot be retried"),
        /** A channel of that name exists (on any node). */
        CHANNEL_EXISTS("channel-exists", "Channel exists"),
        /** Send on, or close of, a closed channel. */
        CHANNEL_CLOSED("channel-closed", "Channel closed"),
        /** A schedule of that name exists. */
        SCHEDULE_EXISTS("schedule-exists", "Schedule exists"),
        /** The schedule kept changing under the request (other nodes firing it); asking again will do. */
        SCHEDULE_BUSY("schedule-busy", "Schedule changing");

        private final String code;
        private final String title;

        Reason(String code, String title) {
            this.code = code;
            this.title = title;
        }

        public String code() {
            return code;
        }

        public String title() {
            return title;
        }
    }

    private final Reason reason;

    public ConflictException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason);
    }

    public Reason reason() {
        return reason;
    }

    /** Send on, or close of, the closed channel {@code name}. */
    public static ServiceException channelClosed(String name) {
        return new ConflictException(Reason.CHANNEL_CLOSED, "channel '" + name + "' is closed").with("channel", name);
    }
}
