package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The web slice of {@code /api/v1/trace/flight} over a real {@link FlightRecorderService} on a real
 * runtime of its own (the flight recorder is the runtime's, so a slice can own one): the last window
 * as a named Perfetto attachment holding the goroutines that just ran, a kept snapshot listed and
 * served with its reason, unknown snapshots as problems naming the id, and every endpoint a 404
 * problem while the recorder is off. {@code FlightControllerTest} covers the automatic triggers
 * over the whole app.
 */
@WebFluxTest(controllers = FlightController.class)
@Import({FlightController.class, ApiExceptionHandler.class, FlightControllerSliceTest.Recorders.class})
class FlightControllerSliceTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final GoRuntime RUNTIME = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());

    @TestConfiguration(proxyBeanMethods = false)
    static class Recorders {
        @Bean
        FlightRecorderService flightRecorderService() {
            var on = new FlightProperties(true, Duration.ofSeconds(5), 65_536, 2, Duration.ZERO, false, null, Duration.ofHours(1));
            return new FlightRecorderService(on, RUNTIME, new ServiceMetrics(null),
                    new MemoryBudget(256L << 20, Duration.ofSeconds(1), new ServiceMetrics(null)));
        }
    }

    @AfterAll
    static void stopRuntime() {
        RUNTIME.close();
    }

    @Autowired
    WebTestClient http;

    @Autowired
    FlightRecorderService flight;

    private WebTestClient big() {
        return http.mutate().responseTimeout(Duration.ofSeconds(30))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(64 << 20)).build();
    }

    @Test
    void theLastWindowIsANamedPerfettoAttachmentWithTheGoroutinesThatJustRan() throws Exception {
        Set<Long> ids = FlightTraces.spawnYielding(RUNTIME, 50);
        var r = big().get().uri("/api/v1/trace/flight").exchange()
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody().returnResult();
        assertThat(r.getResponseHeaders().getFirst(HttpHeaders.CONTENT_DISPOSITION))
                .isEqualTo("attachment; filename=\"gosched-flight.json\"");
        JsonNode trace = JSON.readTree(r.getResponseBody());
        assertThat(trace.path("otherData").path("recorder").asString()).isEqualTo("flight");
        assertThat(trace.path("otherData").path("windowMs").asLong()).isEqualTo(5000);
        assertThat(FlightTraces.goroutineRuns(trace)).containsAll(ids);
    }

    @Test
    void aKeptSnapshotIsListedAndServedWithItsReasonAndUnknownOnesAreProblemsNamingTheId() throws Exception {
        Set<Long> ids = FlightTraces.spawnYielding(RUNTIME, 20);
        assertThat(flight.trigger("test", "asked by the slice test")).isTrue();
        FlightRecorderService.Kept kept = Await.value("the snapshot to be kept", Duration.ofSeconds(10),
                () -> flight.kept().stream().filter(k -> k.reason().equals("test")).findFirst().orElse(null));

        JsonNode list = JSON.readTree(http.get().uri("/api/v1/trace/flight/snapshots").exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody());
        JsonNode listed = list.path("snapshots").valueStream().filter(s -> s.path("id").asLong() == kept.id()).findFirst()
                .orElseThrow(() -> new AssertionError("snapshot " + kept.id() + " not listed: " + list));
        assertThat(listed.path("reason").asString()).isEqualTo("test");
        assertThat(listed.path("detail").asString()).isEqualTo("asked by the slice test");
        assertThat(listed.path("events").asInt()).isEqualTo(kept.snapshot().events().size());
        assertThat(listed.path("href").asString()).isEqualTo("/api/v1/trace/flight/snapshots/" + kept.id());

        var r = big().get().uri(listed.path("href").asString()).exchange().expectStatus().isOk().expectBody().returnResult();
        assertThat(r.getResponseHeaders().getFirst(HttpHeaders.CONTENT_DISPOSITION))
                .isEqualTo("attachment; filename=\"gosched-flight-" + kept.id() + ".json\"");
        JsonNode trace = JSON.readTree(r.getResponseBody());
        assertThat(trace.path("otherData").path("reason").asString()).isEqualTo("test");
        assertThat(FlightTraces.goroutineRuns(trace)).containsAll(ids);

        for (String id : List.of("999999", "nope")) {
            http.get().uri("/api/v1/trace/flight/snapshots/" + id).exchange()
                    .expectStatus().isNotFound()
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo(FlightController.NO_SNAPSHOT.toString())
                    .jsonPath("$.snapshot").isEqualTo(id);
        }
    }

    @Test
    void withTheRecorderOffEveryEndpointIsA404ProblemSayingHowToTurnItOn() {
        var off = new FlightProperties(false, Duration.ofSeconds(5), 65_536, 2, Duration.ZERO, false, null, Duration.ofHours(1));
        FlightRecorderService service = new FlightRecorderService(off, RUNTIME, new ServiceMetrics(null),
                new MemoryBudget(1 << 20, Duration.ofSeconds(1), new ServiceMetrics(null)));
        WebTestClient client = WebTestClient.bindToController(new FlightController(service))
                .controllerAdvice(new ApiExceptionHandler()).build();
        for (String uri : List.of("/api/v1/trace/flight", "/api/v1/trace/flight/snapshots", "/api/v1/trace/flight/snapshots/1")) {
            client.get().uri(uri).exchange()
                    .expectStatus().isNotFound()
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo(FlightController.OFF.toString())
                    .jsonPath("$.detail").isEqualTo("the flight recorder is off: set gosched.trace.flight.enabled=true");
        }
    }
}
