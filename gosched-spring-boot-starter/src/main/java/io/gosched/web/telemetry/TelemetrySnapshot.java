package io.gosched.web.telemetry;

import io.gosched.runtime.LatencyHistogram;
import io.gosched.runtime.ProcStats;
import io.gosched.runtime.SchedStats;
import java.util.List;
import java.util.StringJoiner;

/**
 * One SSE event of the telemetry stream: {@link SchedStats} flattened for JSON (no +Inf bounds, no
 * raw arrays), with the per-P detail of {@code GODEBUG=scheddetail=1} and the one-line
 * {@code schedtrace} form.
 *
 * @param seq increasing number of the snapshot within this stream (also the SSE id)
 * @param timeMillis wall-clock time of the read, for the page's x axis
 * @param schedtrace Go's {@code SCHED …} line built from the same snapshot
 */
public record TelemetrySnapshot(
        long seq,
        long timeMillis,
        double uptimeSeconds,
        int gomaxprocs,
        int idleProcs,
        int globalRunqueue,
        Goroutines goroutines,
        Threads threads,
        Counters counters,
        Latency latency,
        List<Proc> procs,
        String schedtrace) {

    public record Goroutines(long total, long running, long runnable, long waiting, long syscall) {}

    /** Ms by state; running = total less spinning, idle and syscall. */
    public record Threads(int total, int running, int spinning, int idle, int syscall) {}

    /** Monotonic totals; the page turns them into per-second rates. */
    public record Counters(
            long spawned, long schedules, long steals, long stolenGoroutines, long preemptions,
            long preemptHandoffs, long handoffs, long syscallHandoffs, long timersFired, long netpollReady) {}

    /** count and sum, plus quantiles estimated from the buckets (upper bound of the bucket holding them). */
    public record Latency(long count, double sumSeconds, double p50Seconds, double p99Seconds) {}

    /** One P, as scheddetail prints it. {@code runnext} and {@code current} are goroutine ids or -1. */
    public record Proc(int id, String status, int runqueue, long runnext, long current, int m,
                       long schedtick, long syscalltick, int timers) {}

    static TelemetrySnapshot of(long seq, long timeMillis, SchedStats s) {
        List<Proc> procs = s.procs().stream()
                .map(p -> new Proc(p.id(), p.status(), p.runqueue(), p.runnextGoid(), p.currentGoid(), p.mId(),
                        p.schedtick(), p.syscalltick(), p.timers()))
                .toList();
        long running = procs.stream().filter(p -> p.current() >= 0).count();
        int runningMs = Math.max(0, s.threads() - s.spinningThreads() - s.idleThreads() - s.syscallThreads());
        return new TelemetrySnapshot(
                seq, timeMillis, s.uptimeNanos() / 1e9, s.gomaxprocs(), s.idleProcs(), s.globalRunqueue(),
                new Goroutines(s.goroutines(), running, s.goroutinesByState().runnable(), s.goroutinesByState().waiting(),
                        s.goroutinesByState().syscall()),
                new Threads(s.threads(), runningMs, s.spinningThreads(), s.idleThreads(), s.syscallThreads()),
                new Counters(s.spawned(), s.schedules(), s.steals(), s.stolenGoroutines(), s.preemptions(),
                        s.handoffsByCause().preempt(), s.handoffs(), s.handoffsByCause().syscall(), s.timersFired(), s.netpollReady()),
                latency(s.schedLatency()), procs, schedtrace(s));
    }

    /** Go: runtime/proc.go schedtrace (the summary line; per-P detail travels in {@code procs}). */
    static String schedtrace(SchedStats s) {
        StringJoiner local = new StringJoiner(" ", "[", "]");
        for (int n : s.localRunqueues()) {
            local.add(Integer.toString(n));
        }
        return "SCHED " + s.uptimeNanos() / 1_000_000 + "ms: gomaxprocs=" + s.gomaxprocs()
                + " idleprocs=" + s.idleProcs() + " threads=" + s.threads()
                + " spinningthreads=" + s.spinningThreads() + " idlethreads=" + s.idleThreads()
                + " runqueue=" + s.globalRunqueue() + " " + local;
    }

    static Latency latency(LatencyHistogram h) {
        return new Latency(h.count(), h.sumSeconds(), quantile(h, 0.50), quantile(h, 0.99));
    }

    /**
     * The upper bound of the bucket that holds the q-quantile; for the +Inf bucket the last finite
     * bound (JSON has no infinity). 0 with no observations.
     */
    static double quantile(LatencyHistogram h, double q) {
        long total = 0;
        for (long c : h.counts()) {
            total += c;
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        double[] bounds = h.upperBoundsSeconds();
        for (int i = 0; i < bounds.length; i++) {
            seen += h.counts()[i];
            if (seen >= rank) {
                if (Double.isInfinite(bounds[i])) {
                    return i > 0 ? bounds[i - 1] : 0;
                }
                return bounds[i];
            }
        }
        return bounds.length > 1 ? bounds[bounds.length - 2] : 0;
    }
}
