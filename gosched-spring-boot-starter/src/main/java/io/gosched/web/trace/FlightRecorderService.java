package io.gosched.web.trace;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.runtime.FlightRecorder;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.LatencyHistogram;
import io.gosched.runtime.Trace;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * Keeps the runtime's flight recorder ({@link Trace#flightRecorder}) running for the service's life,
 * and keeps snapshots of it when something goes wrong: a job fails ({@code on-job-failure}), or
 * the scheduling latency's p99 over one check interval passes {@code latency-p99-bound}. At most
 * one automatic snapshot per {@code min-interval}; the newest {@code keep} are kept.
 *
 * <p>A runtime has one flight recorder. When other code of the process already runs one on the
 * service's runtime, this service uses that one rather than failing, and starts its own once that
 * one is closed.
 *
 * <p>Snapshots are taken on a thread of this service, never on the failing job's goroutine: the
 * trigger only asks for one.
 *
 * <p>A kept snapshot is charged to the memory budget ({@link Retained#FLIGHT_SNAPSHOTS}, {@value
 * #EVENT_BYTES} bytes an event) from the room left only: a client's traffic can trigger them
 * (failing jobs), so they count against the heap like the rest, and one that does not fit is not
 * kept ({@link #refusedByBudget()}) rather than evicting a client's finished jobs. The recorder's
 * own buffers are fixed at start and part of the service's own heap (docs/memory.md).
 */
@Component
public class FlightRecorderService implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(FlightRecorderService.class);

    /** Why an automatic snapshot was kept. */
    public static final String JOB_FAILED = "job-failed";
    public static final String SCHED_LATENCY = "sched-latency-p99";

    /** A snapshot kept by a trigger. */
    public record Kept(long id, String reason, String detail, Instant takenAt, FlightRecorder.Snapshot snapshot) {
    }

    private final FlightProperties properties;
    private final GoRuntime runtime;
    private final Clock clock;
    private final ScheduledExecutorService executor;
    private final ArrayDeque<Kept> kept = new ArrayDeque<>();
    private final AtomicLong ids = new AtomicLong();
    /** When the last automatic snapshot was asked for (nanoTime), or MIN_VALUE. */
    private long lastTrigger = Long.MIN_VALUE;
    private final AtomicLong suppressed = new AtomicLong();
    private final AtomicLong refusedByBudget = new AtomicLong();
    private final MemoryBudget budget;
    private FlightRecorder own;
    private long[] lastLatency;

    /**
     * Heap bytes of one kept event: a Trace.Event (object header, three longs, an int, a
     * reference, a boolean: 48 bytes with compressed oops) and its slot in the list.
     */
    static final long EVENT_BYTES = 52;

    @Autowired
    public FlightRecorderService(FlightProperties properties, GoRuntime runtime, ServiceMetrics metrics, ServiceBudget budget) {
        this(properties, runtime, metrics, budget.memory());
    }

    FlightRecorderService(FlightProperties properties, GoRuntime runtime, ServiceMetrics metrics, MemoryBudget budget) {
        this.budget = budget;
        this.properties = properties;
        this.runtime = runtime;
        this.clock = Clock.systemUTC();
        if (!properties.enabled()) {
            this.executor = null;
            return;
        }
        recorder();
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gosched-flight-recorder");
            t.setDaemon(true);
            return t;
        });
        if (properties.onJobFailure()) {
            metrics.onJobFinished(state -> {
                if ("failed".equals(state)) {
                    trigger(JOB_FAILED, "a job failed");
                }
            });
        }
        if (properties.latencyP99Bound() != null) {
            long every = properties.latencyCheckInterval().toMillis();
            executor.scheduleWithFixedDelay(this::checkLatency, every, every, TimeUnit.MILLISECONDS);
        }
    }

    /** Whether the flight recorder is on in this service. */
    public boolean enabled() {
        return properties.enabled();
    }

    public FlightProperties properties() {
        return properties;
    }

    /** The last window now; empty when the recorder is disabled. */
    public Optional<FlightRecorder.Snapshot> snapshot() {
        FlightRecorder f = recorder();
        return f == null ? Optional.empty() : Optional.of(f.snapshot());
    }

    /** The kept snapshots, newest first. */
    public synchronized List<Kept> kept() {
        return List.copyOf(kept.reversed());
    }

    public synchronized Optional<Kept> kept(long id) {
        return kept.stream().filter(k -> k.id() == id).findFirst();
    }

    /** Snapshots taken but not kept: the memory budget had no room left for them. */
    public long refusedByBudget() {
        return refusedByBudget.get();
    }

    /** What a kept snapshot is charged to the memory budget. */
    static long bytes(FlightRecorder.Snapshot s) {
        return EVENT_BYTES * s.events().size();
    }

    /** Automatic snapshots not taken because one had been taken less than min-interval before. */
    public long suppressed() {
        return suppressed.get();
    }

    /**
     * Asks for an automatic snapshot (one per min-interval). Cheap and non-blocking: the snapshot
     * is taken on this service's thread. Returns whether one was scheduled.
     */
    public boolean trigger(String reason, String detail) {
        if (executor == null) {
            return false;
        }
        synchronized (this) {
            long now = System.nanoTime();
            if (lastTrigger != Long.MIN_VALUE && now - lastTrigger < properties.minInterval().toNanos()) {
                suppressed.incrementAndGet();
                return false;
            }
            lastTrigger = now;
        }
        try {
            executor.execute(() -> keep(reason, detail));
            return true;
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            return false;
        }
    }

    private void keep(String reason, String detail) {
        FlightRecorder f = recorder();
        if (f == null) {
            return;
        }
        FlightRecorder.Snapshot snapshot = f.snapshot();
        if (!budget.tryChargeSpare(Retained.FLIGHT_SNAPSHOTS, bytes(snapshot))) {
            refusedByBudget.incrementAndGet();
            log.warn("flight recorder: snapshot ({}: {}) of {} events not kept: the memory budget has no room left for it",
                    reason, detail, snapshot.events().size());
            return;
        }
        Kept k = new Kept(ids.incrementAndGet(), reason, detail, clock.instant(), snapshot);
        synchronized (this) {
            kept.addLast(k);
            while (kept.size() > properties.keep()) {
                budget.release(Retained.FLIGHT_SNAPSHOTS, bytes(kept.removeFirst().snapshot()));
            }
        }
        log.info("flight recorder: kept snapshot {} ({}: {}), {} events", k.id(), reason, detail, k.snapshot().events().size());
    }

    /** The p99 of the goroutines' scheduling latency since the last check, against the bound. */
    void checkLatency() {
        try {
            LatencyHistogram h = runtime.stats().schedLatency();
            long[] counts = h.counts().clone();
            long[] prev = lastLatency;
            lastLatency = counts;
            if (prev == null || prev.length != counts.length) {
                return;
            }
            double p99 = p99Seconds(h.upperBoundsSeconds(), prev, counts);
            Duration bound = properties.latencyP99Bound();
            if (p99 > bound.toNanos() / 1e9) {
                trigger(SCHED_LATENCY, "scheduling latency p99 " + (Double.isInfinite(p99) ? "above the largest bucket"
                        : "<= " + Duration.ofNanos((long) (p99 * 1e9))) + " exceeds " + bound);
            }
        } catch (RuntimeException e) {
            log.debug("flight recorder: latency check failed", e);
        }
    }

    /**
     * The upper bound of the bucket holding the 99th percentile of the observations between two
     * readings of the histogram (its counts are per bucket, not cumulative); 0 when none.
     */
    static double p99Seconds(double[] bounds, long[] before, long[] after) {
        long total = 0;
        long[] d = new long[after.length];
        for (int i = 0; i < after.length; i++) {
            d[i] = Math.max(0, after[i] - before[i]);
            total += d[i];
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(total * 0.99);
        long seen = 0;
        for (int i = 0; i < d.length; i++) {
            seen += d[i];
            if (seen >= rank) {
                return bounds[i];
            }
        }
        return bounds[bounds.length - 1];
    }

    /** Ours, or the runtime's active one, or a new one of ours if none is active. */
    private synchronized FlightRecorder recorder() {
        if (!properties.enabled()) {
            return null;
        }
        if (own != null && own.isActive()) {
            return own;
        }
        FlightRecorder active = runtime.trace().activeFlightRecorder();
        if (active != null) {
            return active;
        }
        try {
            own = runtime.trace().flightRecorder(properties.window(), properties.maxEventsPerP());
            return own;
        } catch (IllegalStateException raced) {
            return runtime.trace().activeFlightRecorder();
        }
    }

    /** The Perfetto (Chrome trace-event) JSON of a snapshot, with the flight recorder's facts in otherData. */
    public static Map<String, Object> perfetto(FlightRecorder.Snapshot s, Duration window, Kept kept) {
        Map<String, Object> trace = ChromeTrace.of(s.events().stream().map(TraceEvent::of).toList(), 0,
                Trace.Timestamps.INTERPOLATED);
        @SuppressWarnings("unchecked")
        Map<String, Object> other = new LinkedHashMap<>((Map<String, Object>) trace.get("otherData"));
        other.put("recorder", "flight");
        other.put("windowMs", window.toMillis());
        other.put("complete", s.complete());
        other.put("fromNanos", s.fromNanos());
        other.put("toNanos", s.toNanos());
        if (kept != null) {
            other.put("snapshot", kept.id());
            other.put("reason", kept.reason());
            other.put("detail", kept.detail());
            other.put("takenAt", kept.takenAt().toString());
        }
        trace.put("otherData", other);
        return trace;
    }

    @Override
    public void destroy() {
        if (executor != null) {
            executor.shutdownNow();
        }
        synchronized (this) {
            if (own != null) {
                own.close();
            }
            while (!kept.isEmpty()) {
                budget.release(Retained.FLIGHT_SNAPSHOTS, bytes(kept.removeFirst().snapshot()));
            }
        }
    }
}
