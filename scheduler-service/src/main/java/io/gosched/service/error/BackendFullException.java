package io.gosched.service.error;

import java.time.Duration;

/**
 * The backend is at its size limit (the cluster's job queue or job store): a new job is refused,
 * never accepted and dropped; trying again after {@link #retryAfter()} may find room.
 */
public final class BackendFullException extends BackendException {

    public BackendFullException(String backend, String message, Duration retryAfter) {
        super(backend, message, retryAfter, null);
    }
}
