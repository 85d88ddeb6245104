package io.gosched.web.telemetry;

import io.gosched.runtime.LatencyHistogram;
import io.gosched.runtime.ProcStats;
import io.gosched.runtime.SchedStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** Hand-made {@link SchedStats} for tests that need exact numbers, and a source over them. */
public final class FakeStats {

    private FakeStats() {}

    /** A snapshot with {@code procs} Ps; counters are {@code base}, {@code base+1}, ... so each field is distinguishable. */
    public static SchedStats of(int procs, long base) {
        List<ProcStats> ps = new ArrayList<>();
        int[] local = new int[procs];
        for (int i = 0; i < procs; i++) {
            local[i] = i + 1;
            ps.add(new ProcStats(i, i == 0 ? "running" : i == 1 ? "syscall" : "idle", 100 + i, 10 + i, i + 1,
                    i == 0 ? 42 : -1, i == 0 ? 7 : -1, i, i));
        }
        LatencyHistogram h = new LatencyHistogram(
                new double[] {1e-6, 1e-5, 1e-4, 1e-3, Double.POSITIVE_INFINITY},
                new long[] {1, 2, 3, 4, 5}, 15, 0.5);
        return new SchedStats(procs, procs - 2, 8, 1, 2, 1, 9, local, 30,
                base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7,
                new SchedStats.Handoffs(base + 8, base + 9), new SchedStats.GoroutineStates(11, 12, 3),
                h, ps, 5_000_000_000L, base + 10);
    }

    /** A source over {@code stats} with the given TTL and clock. */
    public static SchedStatsSource source(Supplier<SchedStats> stats, Duration ttl, LongSupplier clock) {
        return new SchedStatsSource(stats, ttl, clock);
    }

    /** A source that reads {@code stats} on every call. */
    public static SchedStatsSource source(Supplier<SchedStats> stats) {
        return new SchedStatsSource(stats, Duration.ZERO, System::nanoTime);
    }
}
