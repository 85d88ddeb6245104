package io.gosched.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** The shared arithmetic of the latency workloads, so every JVM peer reports them the same way. */
public final class Measures {
    private Measures() {}

    /**
     * The timers workload's result. total: wall time of the whole workload; lateness: sum and
     * maximum of (woken - requested) over all sleeps; early: sleeps that returned before their
     * duration. check = sleeps that were not early: Go's time.Sleep never returns early, and a
     * timer that fires at once must not look punctual.
     */
    public static Result timers(long count, long totalNanos, long latenessSumNanos, long latenessMaxNanos, long early) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("total_ms", totalNanos / 1e6);
        m.put("late_ms", count == 0 ? Double.NaN : latenessSumNanos / 1e6 / count);
        m.put("late_max_ms", latenessMaxNanos / 1e6);
        m.put("early", (double) early);
        return new Result(count - early, m);
    }

    /**
     * The hog workload's result from the gaps between consecutive ticks the ticker goroutine saw
     * (the first gap starts when the ticker was created, before the hogs; the last ends at the
     * first tick after the hogs were told to stop). Lateness of a tick = gap - period, floored at
     * 0: a ticker starved for the whole run shows one gap as long as the run.
     *
     * <p>check is 1 when the run is plausible: the ticker ticked, its gaps cover the whole run
     * ({@code millis}), it never ticked faster than its period allows (a ticker that fires without
     * waiting would otherwise look perfectly punctual), and the hogs ran.
     */
    public static Result hog(long millis, long[] gapsNanos, int gapCount, long hogIterations0, long hogIterations1) {
        long[] late = new long[gapCount];
        long covered = 0;
        for (int i = 0; i < gapCount; i++) {
            late[i] = Math.max(0, gapsNanos[i] - Workload.HOG_TICK_NANOS);
            covered += gapsNanos[i];
        }
        Arrays.sort(late);
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("p50_ms", percentile(late, 0.50) / 1e6);
        m.put("p99_ms", percentile(late, 0.99) / 1e6);
        m.put("max_ms", gapCount == 0 ? Double.NaN : late[gapCount - 1] / 1e6);
        m.put("ticks", (double) gapCount);
        boolean plausible = gapCount > 0
                && covered >= millis * 1_000_000
                && gapCount <= covered / Workload.HOG_TICK_NANOS + 2
                && hogIterations0 + hogIterations1 > 0;
        return new Result(plausible ? 1 : 0, m);
    }

    /** Nearest-rank percentile of sorted values (Go's peer uses the same rule). */
    static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) return Double.NaN;
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    /**
     * Starts the platform thread that ends the hog workload after {@code millis}. It must not be a
     * goroutine, virtual thread or coroutine: on a runtime that lets the hogs starve everyone, the
     * stop signal would never run and the workload would never end.
     */
    public static Thread hogStopper(long millis, Runnable stop) {
        Thread t = Thread.ofPlatform().daemon().name("hog-stopper").start(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stop.run();
        });
        return t;
    }
}
