package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.codec.ServerSentEvent;
import reactor.test.StepVerifier;

class TelemetryStreamTest {

    private final AtomicLong base = new AtomicLong();

    private TelemetryStream stream(Duration keepalive) {
        var props = new TelemetryProperties(Duration.ZERO,
                new TelemetryProperties.Stream(Duration.ofSeconds(1), Duration.ofMillis(20), Duration.ofSeconds(10), keepalive),
                new TelemetryProperties.Trace(1024));
        return new TelemetryStream(FakeStats.source(() -> FakeStats.of(2, base.incrementAndGet())), props);
    }

    @Test
    void firstSnapshotAtOnceThenOnePerInterval() {
        TelemetryStream s = stream(Duration.ofMinutes(1));
        long start = System.nanoTime();
        StepVerifier.create(s.events(Duration.ofMillis(200)).take(4))
                .assertNext(e -> {
                    assertThat(e.event()).isEqualTo("snapshot");
                    assertThat(e.data().procs()).hasSize(2);
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(150));
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
}
