package io.gosched.api.job.spi;

import java.time.Duration;

/** The job queue is at its size limit: the submission should be refused with 429 and Retry-After. */
public final class QueueFullException extends RuntimeException {

    private final Duration retryAfter;

    public QueueFullException(String message, Duration retryAfter) {
        super(message, null, false, false);
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
