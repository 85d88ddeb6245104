package io.gosched.web.telemetry;

import io.gosched.service.error.ServiceException;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.Retained;
import io.gosched.api.error.ApiProblem;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class TelemetryStreamTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final AtomicLong base = new AtomicLong();
    private final MemoryBudget budget = new MemoryBudget(1 << 20, Duration.ofSeconds(1), new ServiceMetrics(null));
    /**
     * The stream's clock: nothing moves until a test advances it, so every interval below is
     * asserted to the millisecond and no test waits on the wall clock or the machine's load.
     */
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    private TelemetryStream stream(Duration keepalive) {
        return stream(keepalive, new OpenLimit("gosched.api.admission.max-open-streams", 100, "SSE streams", Retained.STREAMS,
                1024, budget));
    }

    private TelemetryStream stream(Duration keepalive, OpenLimit streams) {
        var props = new TelemetryProperties(Duration.ZERO,
                new TelemetryProperties.Stream(Duration.ofSeconds(1), Duration.ofMillis(20), Duration.ofSeconds(10), keepalive),
                new TelemetryProperties.Trace(1024));
        return new TelemetryStream(FakeStats.source(() -> FakeStats.of(2, base.incrementAndGet())), props, JSON, streams,
                clock);
    }

    @AfterEach
    void stopClock() {
        clock.dispose();
    }

    private static JsonNode data(ServerSentEvent<String> e) {
        return JSON.readTree(e.data());
    }

    private void advance(long millis) {
        clock.advanceTimeBy(Duration.ofMillis(millis));
    }

    @Test
    void firstSnapshotAtOnceThenOnePerInterval() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        List<ServerSentEvent<String>> got = new CopyOnWriteArrayList<>();
        Disposable d = s.events(Duration.ofMillis(200)).filter(e -> e.data() != null).subscribe(got::add);
        assertThat(got).as("a newcomer's first snapshot, before any interval passed").hasSize(1);
        assertThat(got.get(0).event()).isEqualTo("snapshot");
        assertThat(data(got.get(0)).get("procs")).hasSize(2);
        advance(199);
        assertThat(got).as("nothing more before the interval, though the 20 ms ticker ran 9 times").hasSize(1);
        advance(1);
        assertThat(got).hasSize(2);
        advance(400);
        assertThat(got).as("one per 200 ms").hasSize(4);
        assertThat(data(got.get(3)).get("timeMillis").asLong())
                .as("the latest snapshot at 600 ms, stamped by the stream's clock: at most one 20 ms tick old")
                .isBetween(580L, 600L);
        d.dispose();
    }

    @Test
    void keepaliveCommentsArriveBetweenSnapshots() {
        TelemetryStream s = stream(Duration.ofMillis(50));
        List<ServerSentEvent<String>> got = new CopyOnWriteArrayList<>();
        Disposable d = s.events(Duration.ofSeconds(5)).subscribe(got::add);
        advance(49);
        assertThat(got).extracting(ServerSentEvent::comment).containsExactly((String) null);
        advance(1);
        assertThat(got).extracting(ServerSentEvent::comment).containsExactly(null, "keepalive");
        advance(4_950);
        assertThat(got.stream().filter(e -> e.data() == null))
                .as("one comment per 50 ms until the next snapshot at 5 s").hasSize(100)
                .allSatisfy(e -> assertThat(e.comment()).isEqualTo("keepalive"));
        assertThat(got.stream().filter(e -> e.data() != null)).as("at once and at 5 s").hasSize(2);
        d.dispose();
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
        List<Long> ids = new CopyOnWriteArrayList<>();
        Disposable d = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null)
                .map(ServerSentEvent::id).map(Long::parseLong).subscribe(ids::add);
        advance(300);
        d.dispose();
        assertThat(ids).hasSize(4).isSorted().doesNotHaveDuplicates();
        assertThat(ids.get(3) - ids.get(2)).as("100 ms of a 20 ms ticker between two samples").isEqualTo(5);
    }

    @Test
    void subscribersAtOneIntervalShareEachSnapshotsJson() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        List<ServerSentEvent<String>> a = new CopyOnWriteArrayList<>();
        List<ServerSentEvent<String>> b = new CopyOnWriteArrayList<>();
        Disposable da = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null).subscribe(a::add);
        Disposable db = s.events(Duration.ofMillis(100)).filter(e -> e.data() != null).subscribe(b::add);
        advance(400);
        da.dispose();
        db.dispose();
        assertThat(a).hasSize(5);
        assertThat(b).hasSize(5);
        for (int i = 1; i < 5; i++) {
            assertThat(b.get(i).id()).isEqualTo(a.get(i).id());
            assertThat(b.get(i).data()).as("snapshot %s written once for both streams (the same String)", a.get(i).id())
                    .isSameAs(a.get(i).data());
        }
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
                    assertThat(e).isInstanceOf(ServiceException.class);
                    ApiProblem p = ApiProblem.of((ServiceException) e); // as the problem handler answers it
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
