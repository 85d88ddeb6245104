package io.gosched.service.error;

import java.time.Duration;
import java.util.Objects;

/**
 * A backend the service depends on (in cluster mode: NATS) could not carry out a request now,
 * and says when trying again makes sense. Thrown by the ports of {@code io.gosched.service.job.spi}
 * and {@code io.gosched.service.channel.spi}, never by the in-memory defaults.
 */
public abstract sealed class BackendException extends ServiceException permits BackendUnavailableException, BackendFullException {

    private final String backend;
    private final Duration retryAfter;

    /**
     * @param backend    what refused, for the problem detail ("NATS at nats://...")
     * @param retryAfter when trying again makes sense
     */
    BackendException(String backend, String message, Duration retryAfter, Throwable cause) {
        super(message, cause);
        this.backend = Objects.requireNonNull(backend);
        this.retryAfter = Objects.requireNonNull(retryAfter);
    }

    public String backend() {
        return backend;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
