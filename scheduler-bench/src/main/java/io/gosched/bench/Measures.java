package io.gosched.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

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
            late[i] = Math.max(0, gapsNanos[i] - BenchWorkload.HOG_TICK_NANOS);
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
                && gapCount <= covered / BenchWorkload.HOG_TICK_NANOS + 2
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

    /** Warm-up passes of the parked workload before its heap baseline. */
    public static final int PARKED_WARMUP_PASSES = 3;

    /** One runtime's "park n goroutines, run whileParked while all are parked, wake them": returns the sum received. */
    @FunctionalInterface
    public interface ParkAll {
        long park(long n, Runnable whileParked) throws Exception;
    }

    /**
     * The parked workload on a JVM peer (called in its main goroutine): RSS baseline at the start
     * of the (fresh) process; {@link #PARKED_WARMUP_PASSES} passes of {@code warmup} goroutines
     * parked and woken, so that the measured goroutines run JIT-compiled code (a frame frozen from
     * the interpreter is larger: 1,670 B per parked virtual thread in a cold JVM against 850-920 B
     * warm, measured); the heap baseline after them; then n parked, measured while all are parked.
     * RSS is measured from before the warm-up because the measured goroutines reuse the pages
     * the warm-up touched; it therefore includes the warm-up's JIT-compiled code and classes
     * (a few MB in all). Runtimes that recycle goroutine records (gosched's and Go's free G lists)
     * reuse at most {@code warmup} of them: a bias of at most warmup/n of one record. warmup 0
     * skips the warm-up (the smoke test's tiny runs).
     */
    public static Result parkedRun(long n, long warmup, ParkAll runtime) throws Exception {
        long rss0 = Footprint.settle().rssBytes();
        for (int pass = 0; warmup > 0 && pass < PARKED_WARMUP_PASSES; pass++) {
            runtime.park(warmup, () -> {});
            Footprint.awaitJitQuiet(500, 10_000);
        }
        Footprint.Snapshot base = Footprint.settle();
        Footprint.Snapshot[] after = new Footprint.Snapshot[1];
        long sum = runtime.park(n, () -> after[0] = Footprint.settle());
        return parked(n, new Footprint.Snapshot(base.heapBytes(), rss0), after[0], sum);
    }

    /**
     * The parked workload's result: bytes per goroutine of the heap after GC and of the RSS, each
     * the difference of the two snapshots over n. check is the sum of the values the goroutines
     * received after the measurement (n(n-1)/2 when every one of them was parked and alive), or 0
     * when a snapshot is missing (rss -1 means the heap was measured but RSS could not be read: the
     * rss metric is then NaN and the check stands).
     */
    public static Result parked(long n, Footprint.Snapshot before, Footprint.Snapshot after, long receivedSum) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("heap_b", (double) (after.heapBytes() - before.heapBytes()) / n);
        m.put("rss_b", before.rssBytes() < 0 || after.rssBytes() < 0
                ? Double.NaN : (double) (after.rssBytes() - before.rssBytes()) / n);
        m.put("heap_base_mb", before.heapBytes() / 1048576.0);
        m.put("rss_base_mb", before.rssBytes() / 1048576.0);
        boolean measured = before.heapBytes() > 0 && after.heapBytes() > 0;
        return new Result(measured ? receivedSum : 0, m);
    }

    /**
     * The wakeup workload's result from the latencies the receiver recorded (nanoseconds from the
     * send's timestamp to the receiver running). check counts the samples that are not negative:
     * a negative one means the value was not the send's timestamp. missed: sends that found no
     * receiver parked (expected 0; see {@link #driveWakeups}).
     */
    public static Result wakeup(long[] latencyNanos, int count, long missed) {
        long[] sorted = Arrays.copyOf(latencyNanos, count);
        Arrays.sort(sorted);
        long valid = Arrays.stream(sorted).filter(l -> l >= 0).count();
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("p50_us", percentile(sorted, 0.50) / 1e3);
        m.put("p99_us", percentile(sorted, 0.99) / 1e3);
        m.put("max_us", count == 0 ? Double.NaN : sorted[count - 1] / 1e3);
        m.put("missed", (double) missed);
        return new Result(valid, m);
    }

    /**
     * The platform thread's side of the wakeup workload: n times, wait until the receiver has
     * recorded the previous sample, let the runtime go idle for {@link BenchWorkload#wakeGapNanos},
     * then send {@link System#nanoTime()} with a non-blocking send. {@code send} returns whether a
     * receiver was waiting. When {@code retry} is set a send that found none delivered nothing and
     * is tried again after another gap; otherwise (gosched's {@code sendAsync}, which leaves the
     * value pending) the sample stands. Returns the sends that found no receiver waiting.
     *
     * <p>The waiting polls every 20 µs with {@link LockSupport#parkNanos}: a spinning sender would
     * take one of the two cores the receiver's runtime is to wake up on.
     */
    public static long driveWakeups(long n, LongSupplier received, LongPredicate send, boolean retry) {
        long missed = 0;
        for (long i = 0; i < n; i++) {
            while (received.getAsLong() < i) LockSupport.parkNanos(20_000);
            while (true) {
                sleepUntil(System.nanoTime() + BenchWorkload.wakeGapNanos(i));
                if (send.test(System.nanoTime())) break;
                missed++;
                if (!retry) break;
            }
        }
        return missed;
    }

    private static void sleepUntil(long deadline) {
        for (long left; (left = deadline - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
    }
}
