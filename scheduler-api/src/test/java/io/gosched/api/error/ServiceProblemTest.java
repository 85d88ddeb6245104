package io.gosched.api.error;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.gosched.service.error.BackendFullException;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ShuttingDownException;
import io.gosched.service.error.Violation;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client sees for each member of the domain's exception family ({@link ApiProblem#of}): the
 * status, type, title and detail of its problem, {@code Retry-After} where trying again makes
 * sense, and the exception's members after {@code retryAfterSeconds}, in order.
 */
class ServiceProblemTest {

    @Test
    void anUnreachableBackendIs503WithRetryAfterAndNamesTheBackend() {
        ApiProblem p = ApiProblem.of(new BackendUnavailableException("NATS at nats://127.0.0.1:4222",
                "no connection to NATS", Duration.ofMillis(2500), null));
        assertThat(p.getStatusCode().value()).isEqualTo(503);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:backend-unavailable");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("3");
        assertThat(p.getBody().getProperties()).containsEntry("backend", "NATS at nats://127.0.0.1:4222");
    }

    @Test
    void aFullBackendIs429() {
        ApiProblem p = ApiProblem.of(new BackendFullException("NATS stream GOSCHED_JOBS", "the job stream is full",
                Duration.ofSeconds(1)));
        assertThat(p.getStatusCode().value()).isEqualTo(429);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:backend-full");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("1");
    }

    @Test
    void channelRefusalsMapToTheirStatuses() {
        assertThat(ApiProblem.of(new NotFoundException("channel", "c")).getStatusCode().value()).isEqualTo(404);
        assertThat(ApiProblem.of(ConflictException.channelClosed("c")).getStatusCode().value()).isEqualTo(409);
        assertThat(ApiProblem.of(new ConflictException(ConflictException.Reason.CHANNEL_EXISTS, "x")).getStatusCode().value())
                .isEqualTo(409);
        ApiProblem lost = ApiProblem.of(GoneException.channelLost("c", "home gone"));
        assertThat(lost.getStatusCode().value()).isEqualTo(410);
        assertThat(lost.getBody().getType().toString()).isEqualTo("urn:gosched:problem:channel-lost");
        assertThat(lost.getBody().getTitle()).isEqualTo("Channel lost");
        assertThat(lost.getBody().getProperties()).containsEntry("channel", "c");
    }

    @Test
    void notFoundNamesWhatWasAskedFor() {
        ApiProblem p = ApiProblem.of(new NotFoundException("job", "j1"));
        assertThat(p.getStatusCode().value()).isEqualTo(404);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:not-found");
        assertThat(p.getBody().getTitle()).isEqualTo("Not found");
        assertThat(p.getBody().getDetail()).isEqualTo("job 'j1' does not exist");
        assertThat(p.getBody().getProperties()).containsExactly(Map.entry("job", "j1"));
    }

    @Test
    void everyConflictHasItsOwnTypeAndTitle() {
        for (ConflictException.Reason r : ConflictException.Reason.values()) {
            ApiProblem p = ApiProblem.of(new ConflictException(r, "why").with("state", "failed"));
            assertThat(p.getStatusCode().value()).as(r.name()).isEqualTo(409);
            assertThat(p.getBody().getType().toString()).as(r.name()).isEqualTo("urn:gosched:problem:" + r.code());
            assertThat(p.getBody().getTitle()).as(r.name()).isEqualTo(r.title());
            assertThat(p.getBody().getDetail()).isEqualTo("why");
            assertThat(p.getBody().getProperties()).containsExactly(Map.entry("state", "failed"));
        }
        assertThat(ApiProblem.of(new ConflictException(ConflictException.Reason.JOB_FINISHED, "x")).getBody().getTitle())
                .isEqualTo("Job already finished");
    }

    @Test
    void aRefusalIs429WithRetryAfterFirstThenItsMembers() {
        ApiProblem p = ApiProblem.of(new RefusedException(RefusedException.Reason.MEMORY_BUDGET, "full", Duration.ofMillis(1500))
                .with("budget", "gosched.api.limits.max-retained-bytes").with("usedBytes", 10L));
        assertThat(p.getStatusCode().value()).isEqualTo(429);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:memory-budget");
        assertThat(p.getBody().getTitle()).isEqualTo("Memory budget full");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("2");
        assertThat(p.getBody().getProperties().keySet()).containsExactly("retryAfterSeconds", "budget", "usedBytes");
        assertThat(ApiProblem.of(new RefusedException(RefusedException.Reason.OVERLOADED, "x", Duration.ofSeconds(1))).getBody()
                .getType().toString()).isEqualTo("urn:gosched:problem:overloaded");
        assertThat(ApiProblem.of(new RefusedException(RefusedException.Reason.TOO_MANY_OPEN, "x", Duration.ofSeconds(1))).getBody()
                .getTitle()).isEqualTo("Too many open requests");
    }

    @Test
    void shuttingDownIs503WithRetryAfterAndNoMembers() {
        ApiProblem p = ApiProblem.of(new ShuttingDownException());
        assertThat(p.getStatusCode().value()).isEqualTo(503);
        assertThat(p.getBody().getType().toString()).isEqualTo("urn:gosched:problem:shutting-down");
        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("5");
        assertThat(p.getBody().getProperties()).isNullOrEmpty();
    }

    @Test
    void anInvalidRequestIs422ListingEveryViolation() {
        ApiProblem one = ApiProblem.of(new InvalidRequestException("/a", "is required"));
        assertThat(one.getStatusCode().value()).isEqualTo(422);
        assertThat(one.getBody().getDetail()).isEqualTo("/a: is required");
        ApiProblem two = ApiProblem.of(new InvalidRequestException(List.of(new Violation("/a", "x"), new Violation("/b", "y"))));
        assertThat(two.getBody().getDetail()).isEqualTo("2 fields are invalid; see errors");
        assertThat(two.getBody().getProperties().get("errors")).isEqualTo(List.of(Map.of("pointer", "/a", "detail", "x"),
                Map.of("pointer", "/b", "detail", "y")));
    }
}
