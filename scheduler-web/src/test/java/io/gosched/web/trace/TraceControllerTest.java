package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.testing.Await;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Trace;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/v1/trace} on a real server. Four Ps even on a two-core machine, so a skewed workload
 * always has idle Ps that can only get work by stealing.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"gosched.runtime.gomaxprocs=4", "gosched.telemetry.trace.capacity-per-p=65536"})
@AutoConfigureWebTestClient
class TraceControllerTest {

    @Autowired
    WebTestClient client;

    @Autowired
    GoRuntime runtime;

    @Autowired
    TraceRecorder recorder;

    @LocalServerPort
    int port;

    @AfterEach
    void noRecordingLeftBehind() {
        Await.until("the recording to stop", Duration.ofSeconds(10), () -> !runtime.trace().isRecording());
    }

    @Test
    void aSkewedWorkloadExportsPerPTracksRunSlicesAndSteals() throws Exception {
        WebTestClient slow = client.mutate().responseTimeout(Duration.ofSeconds(60))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(256 << 20)).build();
        CompletableFuture<EntityExchangeResult<byte[]>> response = CompletableFuture.supplyAsync(() ->
                slow.get().uri("/api/v1/trace?seconds=1").exchange()
                        .expectStatus().isOk()
                        .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                        .expectBody().returnResult());
        Await.until("the recording to start", Duration.ofSeconds(10), runtime.trace()::isRecording);

        // One goroutine spawns every worker: they queue on its P (runnext, then its ring), so the
        // other Ps can only get work by stealing it. Rounds until the recording ends.
        int rounds = 0;
        while (!response.isDone() && runtime.trace().isRecording()) {
            int n = 500;
            CountDownLatch done = new CountDownLatch(n);
            runtime.go(() -> {
                for (int i = 0; i < n; i++) {
                    Go.go(() -> {
                        spin(20_000);
                        done.countDown();
                    });
                }
            });
            assertThat(done.await(30, TimeUnit.SECONDS)).as("round %d finished", rounds).isTrue();
            rounds++;
        }
        EntityExchangeResult<byte[]> result = response.get(60, TimeUnit.SECONDS);
        assertThat(rounds).isPositive();
        assertThat(result.getResponseHeaders().getFirst(HttpHeaders.CONTENT_DISPOSITION))
                .isEqualTo("attachment; filename=\"gosched-trace.json\"");

        JsonNode trace = JsonMapper.builder().build().readTree(result.getResponseBody());
        List<JsonNode> events = trace.get("traceEvents").valueStream().toList();
        Set<Integer> pTracks = events.stream()
                .filter(e -> e.get("ph").asString().equals("M") && e.get("name").asString().equals("thread_name")
                        && e.get("args").get("name").asString().matches("P\\d+"))
                .map(e -> e.get("tid").asInt())
                .collect(Collectors.toSet());
        assertThat(pTracks).as("one named track per P that ran").hasSizeGreaterThanOrEqualTo(2);

        List<JsonNode> runs = events.stream()
                .filter(e -> e.get("ph").asString().equals("X") && e.get("name").asString().matches("G\\d+"))
                .toList();
        assertThat(runs).as("goroutine run slices").hasSizeGreaterThan(100);
        assertThat(runs).allSatisfy(r -> {
            assertThat(pTracks).contains(r.get("tid").asInt());
            assertThat(r.get("dur").asDouble()).isGreaterThanOrEqualTo(0);
        });
        assertThat(runs.stream().map(r -> r.get("tid").asInt()).distinct().count())
                .as("goroutines ran on more than one P").isGreaterThan(1);

        List<JsonNode> steals = events.stream()
                .filter(e -> e.get("ph").asString().equals("i") && e.get("name").asString().startsWith("steal from P"))
                .toList();
        assertThat(steals).as("steal instants").isNotEmpty();
        JsonNode steal = steals.getFirst();
        assertThat(steal.get("args").get("goroutines").asInt()).isPositive();
        assertThat(steal.get("args").get("victim").asInt()).isNotEqualTo(steal.get("tid").asInt());
        assertThat(trace.get("otherData").get("events").asLong()).isPositive();
        assertThat(trace.get("otherData").has("dropped")).isTrue();
    }

    @Test
    void secondsOutOfRangeAre422ProblemsNamingTheParameterAndItsBounds() {
        for (String bad : List.of("0", "31", "-1")) {
            client.get().uri("/api/v1/trace?seconds={s}", bad).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.status").isEqualTo(422)
                    .jsonPath("$.parameter").isEqualTo("seconds")
                    .jsonPath("$.errors[0].pointer").isEqualTo("/seconds")
                    .jsonPath("$.min").isEqualTo(1)
                    .jsonPath("$.max").isEqualTo(30);
        }
        assertThat(runtime.trace().isRecording()).isFalse();
    }

    @Test
    void secondsThatAreNoIntegerAre400ProblemsNamingTheParameter() {
        for (String bad : List.of("abc", "1.5")) {
            client.get().uri("/api/v1/trace?seconds={s}", bad).exchange()
                    .expectStatus().isBadRequest()
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request")
                    .jsonPath("$.parameter").isEqualTo("seconds")
                    .jsonPath("$.detail").value(d -> assertThat((String) d).contains("seconds", bad));
        }
        assertThat(runtime.trace().isRecording()).isFalse();
    }

    @Test
    void badTimestampsAre422ProblemsListingTheModes() {
        for (String bad : List.of("precise", "1")) {
            client.get().uri("/api/v1/trace?seconds=1&timestamps={t}", bad).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.parameter").isEqualTo("timestamps")
                    .jsonPath("$.errors[0].pointer").isEqualTo("/timestamps")
                    .jsonPath("$.allowed[0]").isEqualTo("interpolated")
                    .jsonPath("$.allowed[1]").isEqualTo("exact");
        }
        assertThat(runtime.trace().isRecording()).isFalse();
    }

    @Test
    void theTimestampsModeReachesTheRecordingAndTheExport() throws Exception {
        for (String mode : List.of("exact", "interpolated")) {
            CompletableFuture<byte[]> response = CompletableFuture.supplyAsync(() ->
                    client.mutate().responseTimeout(Duration.ofSeconds(30))
                            .codecs(c -> c.defaultCodecs().maxInMemorySize(256 << 20)).build()
                            .get().uri("/api/v1/trace?seconds=1&timestamps={t}", mode).exchange()
                            .expectStatus().isOk().expectBody().returnResult().getResponseBody());
            Await.until("the recording to start", Duration.ofSeconds(10), runtime.trace()::isRecording);
            // Creations and unparks inside runs: interpolated unless exact was asked for.
            while (!response.isDone() && runtime.trace().isRecording()) {
                CountDownLatch done = new CountDownLatch(100);
                runtime.go(() -> {
                    for (int i = 0; i < 100; i++) {
                        Go.go(done::countDown);
                    }
                });
                assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            }
            JsonNode trace = JsonMapper.builder().build().readTree(response.get(30, TimeUnit.SECONDS));
            assertThat(trace.get("otherData").get("timestamps").asString()).isEqualTo(mode);
            List<JsonNode> creates = trace.get("traceEvents").valueStream()
                    .filter(e -> e.get("ph").asString().equals("i") && e.get("name").asString().startsWith("create G")
                            && e.get("tid").asInt() < ChromeTrace.NO_P_TID)
                    .toList();
            assertThat(creates).as("creations on P tracks").isNotEmpty();
            if (mode.equals("exact")) {
                assertThat(creates).noneMatch(e -> e.get("args").has("time"));
            } else {
                assertThat(creates).allMatch(e -> e.get("args").get("time").asString().equals("interpolated"));
            }
            Await.until("the recording to stop", Duration.ofSeconds(10), () -> !runtime.trace().isRecording());
        }
    }

    @Test
    void aSecondRecordingIs409() {
        Trace.Recording other = runtime.trace().start(16);
        try {
            client.get().uri("/api/v1/trace?seconds=1").exchange()
                    .expectStatus().isEqualTo(409)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.status").isEqualTo(409)
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:trace-busy")
                    .jsonPath("$.title").isEqualTo("Trace already recording");
        } finally {
            other.stop();
        }
        assertThat(recorder.recording()).isFalse();
    }

    @Test
    void aClientThatHangsUpStopsTheRecording() {
        Disposable request = WebClient.create("http://127.0.0.1:" + port).get().uri("/api/v1/trace?seconds=30")
                .retrieve().bodyToMono(String.class).subscribe(body -> { }, error -> { });
        try {
            Await.until("the recording to start", Duration.ofSeconds(10), recorder::recording);
            assertThat(runtime.trace().isRecording()).isTrue();
        } finally {
            request.dispose();
        }
        // Well before the 30 s the request asked for.
        Await.until("the recording to stop after the hang-up", Duration.ofSeconds(10), () -> !runtime.trace().isRecording() && !recorder.recording());
    }

    private static void spin(int n) {
        long x = 0;
        for (int k = 0; k < n; k++) {
            x += k * 31L;
        }
        if (x == 42) {
            throw new AssertionError("unreachable; keeps the loop alive");
        }
    }
}
