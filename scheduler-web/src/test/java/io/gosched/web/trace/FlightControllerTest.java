package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.testing.Await;
import io.gosched.runtime.GoRuntime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/v1/trace/flight} on a real server: the last window now, and the snapshots kept when
 * a job fails or the scheduling latency passes its bound (a bound of 1 ns: any latency passes it).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"gosched.runtime.gomaxprocs=2", "gosched.trace.flight.window=3s", "gosched.trace.flight.min-interval=0s",
            "gosched.trace.flight.keep=64"})
@AutoConfigureWebTestClient
class FlightControllerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient client;

    @Autowired
    GoRuntime runtime;

    @Autowired
    FlightRecorderService flight;

    private WebTestClient big() {
        return client.mutate().responseTimeout(Duration.ofSeconds(60))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(256 << 20)).build();
    }

    @Test
    void theLastWindowIsAPerfettoFileWithTheGoroutinesThatJustRan() throws Exception {
        Set<Long> ids = FlightTraces.spawnYielding(runtime, 200);
        EntityExchangeResult<byte[]> r = big().get().uri("/api/v1/trace/flight").exchange()
                .expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody().returnResult();
        assertThat(r.getResponseHeaders().getFirst(HttpHeaders.CONTENT_DISPOSITION))
                .isEqualTo("attachment; filename=\"gosched-flight.json\"");
        JsonNode trace = JSON.readTree(r.getResponseBody());
        assertThat(trace.path("otherData").path("recorder").asString()).isEqualTo("flight");
        assertThat(trace.path("otherData").path("windowMs").asLong()).isEqualTo(3000);
        assertThat(FlightTraces.goroutineRuns(trace)).containsAll(ids);
    }

    @Test
    void aFailingJobKeepsASnapshot() throws Exception {
        long before = keptFor(FlightRecorderService.JOB_FAILED).size();
        // closing a closed channel fails the job's step
        Map<?, ?> job = client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("workload", Map.of("channels", List.of(Map.of("name", "c", "capacity", 1)),
                        "steps", List.of(Map.of("op", "close", "channel", "c"), Map.of("op", "close", "channel", "c")))))
                .exchange().expectStatus().isAccepted().expectBody(Map.class).returnResult().getResponseBody();
        assertThat(job.get("id")).isNotNull();
        List<JsonNode> kept = Await.value("a job-failed snapshot", Duration.ofSeconds(30), () -> {
            List<JsonNode> k = keptFor(FlightRecorderService.JOB_FAILED);
            return k.size() > before ? k : null;
        });
        long id = kept.getFirst().path("id").asLong();
        JsonNode trace = JSON.readTree(big().get().uri("/api/v1/trace/flight/snapshots/" + id).exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody());
        assertThat(trace.path("otherData").path("reason").asString()).isEqualTo(FlightRecorderService.JOB_FAILED);
        assertThat(trace.path("traceEvents").size()).isPositive();
    }

    @Test
    void unknownSnapshotsAreNotFoundProblems() {
        for (String id : List.of("999999", "nope")) {
            client.get().uri("/api/v1/trace/flight/snapshots/" + id).exchange().expectStatus().isNotFound()
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.type").isEqualTo(FlightController.NO_SNAPSHOT.toString());
        }
    }

    private List<JsonNode> keptFor(String reason) {
        JsonNode list = JSON.readTree(client.get().uri("/api/v1/trace/flight/snapshots").exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody());
        return list.path("snapshots").valueStream().filter(s -> s.path("reason").asString().equals(reason)).toList();
    }
}
