package io.gosched.api.error;

import java.time.Duration;

import io.gosched.api.channel.spi.ChannelException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a client sees when the cluster's backend or a channel's home refuses a request. */
class BackendProblemTest {

    @Test
    void anUnreachableBackendIs503WithRetryAfterAndNamesTheBackend() {
        ApiProblem p = ApiProblem.backendUnavailable(new BackendUnavailableException("NATS at nats://127.0.0.1:4222",
                "no connection to NATS", Duration.ofMillis(2500), null));
        assertThat(p.getStatusCode().value()).isEqualTo(503);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:backend-unavailable");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("3");
        assertThat(p.getBody().getProperties()).containsEntry("backend", "NATS at nats://127.0.0.1:4222");
    }

    @Test
    void aFullBackendIs429() {
        ApiProblem p = ApiProblem.backendFull(new BackendFullException("NATS stream GOSCHED_JOBS", "the job stream is full",
                Duration.ofSeconds(1)));
        assertThat(p.getStatusCode().value()).isEqualTo(429);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:backend-full");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("1");
    }

    @Test
    void channelRefusalsMapToTheirStatuses() {
        assertThat(status(ChannelException.Kind.NOT_FOUND)).isEqualTo(404);
        assertThat(status(ChannelException.Kind.CLOSED)).isEqualTo(409);
        assertThat(status(ChannelException.Kind.EXISTS)).isEqualTo(409);
        assertThat(status(ChannelException.Kind.LOST)).isEqualTo(410);
        assertThat(ApiProblem.channel(new ChannelException(ChannelException.Kind.LOST, "c", "home gone")).getBody().getProperties())
                .containsEntry("channel", "c");
    }

    private static int status(ChannelException.Kind kind) {
        return ApiProblem.channel(new ChannelException(kind, "c", "x")).getStatusCode().value();
    }
}
