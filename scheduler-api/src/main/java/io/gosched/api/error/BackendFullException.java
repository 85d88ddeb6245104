package io.gosched.api.error;

import java.time.Duration;

/**
 * The backend is at its size limit (the cluster's job queue or job store): a new job is refused
 * with 429 and {@code Retry-After}, never accepted and dropped.
 */
public final class BackendFullException extends BackendException {

    public BackendFullException(String backend, String message, Duration retryAfter) {
        super(backend, message, retryAfter, null);
    }
}
