package io.gosched.api.job.spi;

import java.time.Duration;

/** The job store is at its size limit: a new job should be refused with 429 and Retry-After. */
public final class StoreFullException extends RuntimeException {

    private final Duration retryAfter;

    public StoreFullException(String message, Duration retryAfter) {
        super(message, null, false, false);
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
