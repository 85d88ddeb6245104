package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.ApiMetrics;
import io.gosched.api.budget.MemoryBudget;
import io.gosched.api.budget.OpenLimit;
import io.gosched.api.budget.Retained;
import io.gosched.api.error.ApiProblem;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class TelemetryStreamTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static {
        // Jackson introspects a type on its first write (a few hundred ms cold): not what the timings here are about.
        JSON.writeValueAsString(TelemetrySnapshot.of(0, 0, FakeStats.of(2, 0)));
    }

    private final AtomicLong base = new AtomicLong();
    private final MemoryBudget budget = new MemoryBudget(1 << 20, Duration.ofSeconds(1), new ApiMetrics(null));

    private TelemetryStream stream(Duration keepalive) {
        return stream(keepalive, new OpenLimit("gosched.api.admission.max-open-streams", 100, "SSE streams", Retained.STREAMS,
                1024, budget));
    }

    private TelemetryStream stream(Duration keepalive, OpenLimit streams) {
        var props = new TelemetryProperties(Duration.ZERO,
                new TelemetryProperties.Stream(Duration.ofSeconds(1), Duration.ofMillis(20), Duration.ofSeconds(10), keepalive),
                new TelemetryProperties.Trace(1024));
        return new TelemetryStream(FakeStats.source(() -> FakeStats.of(2, base.incrementAndGet())), props, JSON, streams);
    }

    private static JsonNode data(ServerSentEvent<String> e) {
        return JSON.readTree(e.data());
    }

    @Test
    void firstSnapshotAtOnceThenOnePerInterval() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        long start = System.nanoTime();
        StepVerifier.create(s.events(Duration.ofMillis(200)).take(4))
                .assertNext(e -> {
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(150));
                    assertThat(e.event()).isEqualTo("snapshot");
                    assertThat(data(e).get("procs")).hasSize(2);
                })
                .expectNextCount(3)
                .verifyComplete();
        // 1 at once + 3 sampled at 200 ms: about 600 ms, far from the 20 ms tick
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(500));
    }

    @Test
    void keepaliveCommentsArriveBetweenSnapshots() {
        TelemetryStream s = stream(Duration.ofMillis(50));
        StepVerifier.create(s.events(Duration.ofSeconds(5)).filter(e -> e.data() == null).take(2))
                .assertNext(e -> assertThat(e.comment()).isEqualTo("keepalive"))
                .assertNext(e -> assertThat(e.comment()).isEqualTo("keepalive"))
                .expectComplete()
                .verify(Duration.ofSeconds(2));
    }

    @Test
    void contextCloseCompletesOpenAndLaterStreams() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        StepVerifier.create(s.events(Duration.ofSeconds(1)))
                .expectNextMatches(e -> e.data() != null)
                .then(() -> s.onApplicationEvent(new ContextClosedEvent(new GenericApplicationContext())))
                .expectComplete()
                .verify(Duration.ofSeconds(2));
        StepVerifier.create(s.events(Duration.ofSeconds(1))).expectComplete().verify(Duration.ofSeconds(2));
    }

    @Test
    void snapshotsCarrySequenceIdsThatIncrease() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        var ids = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null).take(3)
                .map(ServerSentEvent::id).map(Long::parseLong).collectList().block(Duration.ofSeconds(3));
        assertThat(ids).hasSize(3).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void subscribersAtOneIntervalShareEachSnapshotsJson() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        Flux<ServerSentEvent<String>> a = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null);
        Flux<ServerSentEvent<String>> b = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null);
        List<List<ServerSentEvent<String>>> both = Flux.zip(a.skip(1).take(4).collectList(), b.skip(1).take(4).collectList())
                .map(t -> List.of(t.getT1(), t.getT2())).blockFirst(Duration.ofSeconds(5));
        Map<String, String> first = new java.util.HashMap<>();
        both.get(0).forEach(e -> first.put(e.id(), e.data()));
        long shared = both.get(1).stream().filter(e -> first.get(e.id()) == e.data()).count();
        assertThat(shared).as("snapshots both streams got, written once (the same String)").isGreaterThanOrEqualTo(3);
    }

    @Test
    void streamsBeyondTheOpenBoundAreRefusedWith429AndCountedFree() {
        OpenLimit two = new OpenLimit("gosched.api.admission.max-open-streams", 2, "SSE streams", Retained.STREAMS, 16384, budget);
        TelemetryStream s = stream(Duration.ofMinutes(1), two);
        Disposable first = s.events(Duration.ofSeconds(1)).subscribe();
        Disposable second = s.events(Duration.ofSeconds(1)).subscribe();
        assertThat(budget.held(Retained.STREAMS)).isEqualTo(2 * 16384);
        StepVerifier.create(s.events(Duration.ofSeconds(1)))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(ApiProblem.class);
                    ApiProblem p = (ApiProblem) e;
                    assertThat(p.getStatusCode().value()).isEqualTo(429);
                    assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("1");
                    assertThat(p.getBody().getDetail()).contains("2 SSE streams", "gosched.api.admission.max-open-streams");
                })
                .verify(Duration.ofSeconds(2));
        first.dispose();
        assertThat(two.open()).isEqualTo(1);
        StepVerifier.create(s.events(Duration.ofSeconds(1)).filter(e -> e.data() != null).take(1)).expectNextCount(1)
                .verifyComplete();
        second.dispose();
        assertThat(two.open()).isZero();
        assertThat(budget.held(Retained.STREAMS)).as("every stream's bytes went back").isZero();
    }
}
