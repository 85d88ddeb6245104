package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.Retained;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.testing.Await;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The web slice of {@code /api/v1/telemetry/stream} over a real {@link TelemetryStream} on a
 * virtual clock: the answer is an event stream whose first snapshot comes at once, an interval
 * outside the configured bounds is a 422 naming {@code intervalMs} and the bounds, and a stream
 * beyond the open-stream bound is a 429.
 */
@WebFluxTest(controllers = TelemetryController.class)
@Import({TelemetryController.class, ApiExceptionHandler.class, TelemetryControllerSliceTest.Stream.class})
class TelemetryControllerSliceTest {

    static final VirtualTimeScheduler CLOCK = VirtualTimeScheduler.create();
    static final OpenLimit ONE_STREAM = new OpenLimit("gosched.api.admission.max-open-streams", 1, "SSE streams",
            Retained.STREAMS, 1024, new MemoryBudget(1 << 20, Duration.ofSeconds(1), new ServiceMetrics(null)));

    @TestConfiguration(proxyBeanMethods = false)
    static class Stream {
        @Bean
        TelemetryStream telemetryStream() {
            var props = new TelemetryProperties(Duration.ZERO,
                    new TelemetryProperties.Stream(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(10),
                            Duration.ofMinutes(1)),
                    new TelemetryProperties.Trace(1024));
            return new TelemetryStream(FakeStats.source(() -> FakeStats.of(3, 7)), props, JsonMapper.builder().build(), ONE_STREAM,
                    CLOCK);
        }
    }

    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {};

    @Autowired
    WebTestClient http;

    /** A client's cancel reaches the server a moment later: then the stream's slot is free again. */
    @AfterEach
    void allStreamsClosed() {
        Await.until("every stream released its slot", Duration.ofSeconds(10), () -> ONE_STREAM.open() == 0);
    }

    @Test
    void theFirstSnapshotComesAtOnceAsAnEventStream() {
        var result = http.get().uri("/api/v1/telemetry/stream?intervalMs=200").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .returnResult(SSE);
        StepVerifier.create(result.getResponseBody().filter(e -> e.data() != null).take(1))
                .assertNext(e -> {
                    assertThat(e.event()).isEqualTo("snapshot");
                    JsonNode snapshot = JsonMapper.builder().build().readTree(e.data());
                    assertThat(snapshot.get("procs")).hasSize(3);
                    assertThat(e.id()).isEqualTo(Long.toString(snapshot.get("seq").asLong()));
                })
                .verifyComplete();
    }

    @Test
    void anIntervalOutsideTheBoundsIs422NamingTheParameterAndTheBounds() {
        for (long ms : List.of(99L, 10_001L)) {
            http.get().uri("/api/v1/telemetry/stream?intervalMs=" + ms).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.parameter").isEqualTo("intervalMs")
                    .jsonPath("$.min").isEqualTo(100)
                    .jsonPath("$.max").isEqualTo(10_000)
                    .jsonPath("$.errors[0].pointer").isEqualTo("/intervalMs");
        }
        http.get().uri("/api/v1/telemetry/stream?intervalMs=soon").exchange().expectStatus().isBadRequest()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request");
    }

    @Test
    void aStreamBeyondTheOpenBoundIs429() {
        var first = http.get().uri("/api/v1/telemetry/stream").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isOk().returnResult(SSE);
        StepVerifier.create(first.getResponseBody().filter(e -> e.data() != null))
                .expectNextCount(1)
                .then(() -> http.get().uri("/api/v1/telemetry/stream").exchange()
                        .expectStatus().isEqualTo(429)
                        .expectHeader().exists("Retry-After")
                        .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:too-many-open"))
                .thenCancel()
                .verify();
    }
}
