package io.gosched.service.error;

import java.time.Duration;

/**
 * The backend cannot be reached now; trying again after {@link #retryAfter()} may. The request was
 * not carried out, or (a read) nothing could be read; for a forwarded channel send it means the
 * outcome is unknown, never that the value was not sent.
 */
public final class BackendUnavailableException extends BackendException {

    public BackendUnavailableException(String backend, String message, Duration retryAfter, Throwable cause) {
        super(backend, message, retryAfter, cause);
    }
}
