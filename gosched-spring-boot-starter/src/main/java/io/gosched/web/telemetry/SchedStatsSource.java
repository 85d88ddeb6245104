package io.gosched.web.telemetry;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedStats;
import java.time.Duration;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Component;

/**
 * The one place the web layer reads {@link GoRuntime#stats()}: a read is kept for
 * {@code gosched.telemetry.snapshot-ttl} (a few milliseconds) and handed to every caller in that
 * window.
 *
 * <p>Why: a Prometheus scrape evaluates some fifty gosched meters one after the other. Reading the
 * runtime per meter would cost fifty snapshots and, worse, mix counters from different instants
 * (a rate of steals against a count of schedules taken later). One cached read per scrape is both
 * cheaper and self-consistent.
 *
 * <p>Thread-safe: the cached pair is one immutable object published through a volatile field; two
 * callers racing past the deadline may both read the runtime, which is harmless.
 */
@Component
public class SchedStatsSource {

    /** An immutable (read time, stats) pair so the check and the value come from one volatile read. */
    private record Cached(long readAtNanos, SchedStats stats) {}

    private final Supplier<SchedStats> read;
    private final long ttlNanos;
    private final LongSupplier nanoClock;
    private volatile Cached cached; // publishes the immutable pair; readers never see a torn one

    @Autowired
    public SchedStatsSource(GoRuntime runtime, TelemetryProperties properties) {
        this(runtime::stats, properties.snapshotTtl(), System::nanoTime);
    }

    /** For tests: any stats supplier and clock. */
    SchedStatsSource(Supplier<SchedStats> read, Duration ttl, LongSupplier nanoClock) {
        this.read = read;
        this.ttlNanos = ttl.toNanos();
        this.nanoClock = nanoClock;
    }

    /** Can be called from any thread: the latest stats, at most the configured TTL old. */
    public SchedStats stats() {
        long now = nanoClock.getAsLong();
        Cached c = cached;
        if (c == null || now - c.readAtNanos() >= ttlNanos) {
            c = new Cached(now, read.get());
            cached = c;
        }
        return c.stats();
    }
}
