package io.gosched.api.error;

import java.time.Duration;
import java.util.Objects;

/**
 * A backend the service depends on (in cluster mode: NATS) cannot be reached now. The answer to
 * the client is 503 with {@code Retry-After}: the request was not carried out, or (for a read)
 * nothing could be read. Thrown by the ports of {@code io.gosched.api.job.spi} and
 * {@code io.gosched.api.channel.spi}, never by the embedded default.
 */
public final class BackendUnavailableException extends RuntimeException {

    private final String backend;
    private final Duration retryAfter;

    /**
     * @param backend    what is unreachable, for the problem detail ("NATS at nats://...")
     * @param retryAfter when trying again makes sense
     */
    public BackendUnavailableException(String backend, String message, Duration retryAfter, Throwable cause) {
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
