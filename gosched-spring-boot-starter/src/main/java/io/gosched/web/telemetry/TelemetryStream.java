package io.gosched.web.telemetry;

import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.ServiceBudget;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * The shared hot source behind {@code /api/v1/telemetry/stream}.
 *
 * <p>One ticker at {@code min-interval} reads stats (through {@link SchedStatsSource}, so a scrape
 * in the same few milliseconds shares the read) and writes each snapshot as JSON once, while at
 * least one client listens; it stops when the last leaves (reference-counted). Subscribers at the
 * same interval share one sampler of it, so 5,000 streams at 100 ms cost one read, one JSON write
 * and one timer per tick, plus the bytes each connection is sent. A newcomer gets the latest
 * snapshot at once (the ticker replays it), then its interval's samples. A slow reader keeps only
 * the latest ({@code onBackpressureLatest}): a stalled browser never queues snapshots nor slows
 * the scheduler.
 *
 * <p>Open streams count against {@code gosched.api.admission.max-open-streams} together with the
 * job event streams, and each is charged to the memory budget for its connection and buffers:
 * beyond either bound a new stream is refused with 429.
 *
 * <p>Shutdown: an open SSE response counts as an in-flight request, so graceful shutdown would wait
 * the whole {@code timeout-per-shutdown-phase} for it. A {@link ContextClosedEvent} is published
 * before the web server drains, so completing every stream there lets shutdown proceed at once.
 *
 * <p>Time: every tick, sample and keepalive runs on one Reactor {@link Scheduler} (Reactor's
 * parallel one in the service), and a snapshot's timestamp is that scheduler's clock. A test hands
 * in a virtual-time scheduler and moves the clock itself, so the intervals are asserted exactly
 * and do not depend on the machine's load.
 */
@Component
public class TelemetryStream implements ApplicationListener<ContextClosedEvent> {

    /** One snapshot as it goes on the wire: written as JSON once for every subscriber. */
    record Frame(long seq, String json) {}

    private final TelemetryProperties.Stream properties;
    private final Flux<Frame> hot;
    /** One sampler per interval asked for; at most one per millisecond between min- and max-interval. */
    private final ConcurrentMap<Duration, Flux<Frame>> paced = new ConcurrentHashMap<>();
    private final Flux<ServerSentEvent<String>> keepalive;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private final OpenLimit streams;
    private final Scheduler timer;

    @Autowired
    public TelemetryStream(SchedStatsSource source, TelemetryProperties properties, JsonMapper json, ServiceBudget budget) {
        this(source, properties, json, budget.streams(), Schedulers.parallel());
    }

    TelemetryStream(SchedStatsSource source, TelemetryProperties properties, JsonMapper json, OpenLimit streams,
            Scheduler timer) {
        this.properties = properties.stream();
        this.streams = streams;
        this.timer = timer;
        AtomicLong seq = new AtomicLong();
        this.hot = Flux.interval(Duration.ZERO, this.properties.minInterval(), timer)
                .onBackpressureDrop()
                .map(tick -> {
                    TelemetrySnapshot s = TelemetrySnapshot.of(seq.incrementAndGet(), timer.now(TimeUnit.MILLISECONDS),
                            source.stats());
                    return new Frame(s.seq(), json.writeValueAsString(s));
                })
                .replay(1)
                .refCount();
        this.keepalive = Flux.interval(this.properties.keepalive(), timer)
                .onBackpressureDrop()
                .map(i -> ServerSentEvent.<String>builder().comment("keepalive").build())
                .share();
    }

    /**
     * Can be called from any thread: one {@code snapshot} event at once, then one about every
     * {@code interval}, with keepalive comments; the data is the snapshot's JSON. Completes on
     * context close; refused (429) at subscription beyond the open-stream bound or the budget.
     */
    public Flux<ServerSentEvent<String>> events(Duration interval) {
        Flux<Frame> sampled = paced.computeIfAbsent(interval, i -> hot.sample(Flux.interval(i, timer)).publish().refCount());
        return streams.guard(Flux.defer(() -> {
            AtomicLong last = new AtomicLong();
            Flux<ServerSentEvent<String>> snapshots = Flux.concat(hot.take(1), sampled)
                    .filter(f -> f.seq() > last.getAndAccumulate(f.seq(), Math::max)) // the replayed one may come again
                    .onBackpressureLatest()
                    .map(f -> ServerSentEvent.builder(f.json())
                            .id(Long.toString(f.seq()))
                            .event("snapshot")
                            .retry(Duration.ofSeconds(2))
                            .build());
            return Flux.merge(snapshots, keepalive).takeUntilOther(closed.asMono());
        }));
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
