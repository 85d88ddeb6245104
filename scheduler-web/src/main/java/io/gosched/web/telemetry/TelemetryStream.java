package io.gosched.web.telemetry;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The shared hot source behind {@code /api/v1/telemetry/stream}.
 *
 * <p>One ticker at {@code min-interval} reads stats (through {@link SchedStatsSource}, so a scrape
 * in the same few milliseconds shares the read) while at least one client listens, and stops when
 * the last leaves ({@code share()} reference-counts). Each client samples it at its own interval and
 * keeps only the latest snapshot when it reads slowly ({@code onBackpressureLatest}): a stalled
 * browser never queues snapshots nor slows the scheduler.
 *
 * <p>Shutdown: an open SSE response counts as an in-flight request, so graceful shutdown would wait
 * the whole {@code timeout-per-shutdown-phase} for it. A {@link ContextClosedEvent} is published
 * before the web server drains, so completing every stream there lets shutdown proceed at once.
 */
@Component
public class TelemetryStream implements ApplicationListener<ContextClosedEvent> {

    private final TelemetryProperties.Stream properties;
    private final Flux<TelemetrySnapshot> hot;
    private final Sinks.Empty<Void> closed = Sinks.empty();

    public TelemetryStream(SchedStatsSource source, TelemetryProperties properties) {
        this.properties = properties.stream();
        AtomicLong seq = new AtomicLong();
        this.hot = Flux.interval(Duration.ZERO, this.properties.minInterval())
                .onBackpressureDrop()
                .map(tick -> TelemetrySnapshot.of(seq.incrementAndGet(), System.currentTimeMillis(), source.stats()))
                .share();
    }

    /**
     * Can be called from any thread: a cold view of the hot source, one snapshot about every
     * {@code interval} (the first at once), with keepalive comments; completes on context close.
     */
    public Flux<ServerSentEvent<TelemetrySnapshot>> events(Duration interval) {
        Flux<ServerSentEvent<TelemetrySnapshot>> snapshots = hot
                .publish(shared -> Flux.merge(shared.take(1), shared.sample(interval)))
                .onBackpressureLatest()
                .map(s -> ServerSentEvent.builder(s)
                        .id(Long.toString(s.seq()))
                        .event("snapshot")
                        .retry(Duration.ofSeconds(2))
                        .build());
        Flux<ServerSentEvent<TelemetrySnapshot>> keepalive = Flux.interval(properties.keepalive())
                .onBackpressureDrop()
                .map(i -> ServerSentEvent.<TelemetrySnapshot>builder().comment("keepalive").build());
        return Flux.merge(snapshots, keepalive).takeUntilOther(closed.asMono());
    }

    /** Completes every open stream (and any opened later) so graceful shutdown is not stalled. */
    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        closed.tryEmitEmpty();
    }

    public TelemetryProperties.Stream properties() {
        return properties;
    }
}
