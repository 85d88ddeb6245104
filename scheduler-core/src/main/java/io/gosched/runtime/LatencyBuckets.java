package io.gosched.runtime;

/**
 * The buckets and sampling of the scheduling-latency histogram (Go: /sched/latencies:seconds;
 * its snapshot is a {@link LatencyHistogram}): how long a goroutine waited between becoming
 * runnable and running. One in {@link #TRACKING_PERIOD} runnable transitions is timed (Go's
 * gTrackingPeriod sampling; hand-offs more thinly, weighted: see HAND_OFF_TRACKING_PERIOD); the
 * count of each bucket and the sum live in the P that ran the goroutine
 * ({@code P.recordLatency}, written by its owner only), and {@link Stats} adds them up over all
 * Ps.
 *
 * <p>The clock is {@link System#nanoTime}, not the runtime's {@code nanoClock}: the histogram
 * measures real waiting, which a test clock that stands still must not hide.
 *
 * Go: runtime/histogram.go (timeHistogram), runtime/proc.go gTrackingPeriod
 */
final class LatencyBuckets {

    /** One in this many G transitions is timed (Go: gTrackingPeriod). A power of two. */
    static final int TRACKING_PERIOD = 8;

    /**
     * One in this many goroutine-to-goroutine hand-offs (a G readied by a running goroutine into
     * its P's queue: a channel or a lock passing the turn) is timed, and counts {@link
     * #HAND_OFF_WEIGHT} times in the histogram, so that the histogram estimates what Go's 1 in 8
     * of every transition would count. A power of two, a multiple of TRACKING_PERIOD.
     *
     * <p>JVM departure: a timed transition reads {@link System#nanoTime} twice, when the G becomes
     * runnable and when it runs, and on this project's VMs (kvm-clock) one read costs 25 ns against
     * a runnext hand-off of 150-200 ns: at 1 in 8 the clock was 6 ns of every hand-off, 3-4% of a
     * ping-pong round trip; at 1 in 32, 1.6 ns. Only the hand-offs, the transitions that come
     * millions a second, are sampled more thinly: a spawn, a wake-up by a timer, the poller or a
     * platform thread, a preemption or a yield keeps Go's 1 in 8, so a quiet service's histogram
     * fills as fast as before. The choice stays the P's random number, uniform over transitions.
     * (bench/results/NOTES.md, "Two clock reads fewer per hand-off")
     */
    static final int HAND_OFF_TRACKING_PERIOD = 32;

    /** How many transitions a timed hand-off stands for in the histogram's counts and sum. */
    static final int HAND_OFF_WEIGHT = HAND_OFF_TRACKING_PERIOD / TRACKING_PERIOD;

    /** Upper bounds of the buckets, in nanoseconds; a last +Inf bucket follows. */
    static final long[] BOUNDS_NANOS = {
        1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
        1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000, 100_000_000, 1_000_000_000
    };

    private LatencyBuckets() {}

    /** The time a runnable transition starts being timed, or 0 when it is not sampled (rnd: any random int). */
    static long trackedSince(int rnd) {
        return sampledSince(rnd, TRACKING_PERIOD);
    }

    /** {@link #trackedSince} for a goroutine-to-goroutine hand-off: one in {@link #HAND_OFF_TRACKING_PERIOD}. */
    static long handOffTrackedSince(int rnd) {
        return sampledSince(rnd, HAND_OFF_TRACKING_PERIOD);
    }

    private static long sampledSince(int rnd, int period) {
        return (rnd & (period - 1)) == 0 ? System.nanoTime() : 0;
    }

    /** The bucket of a wait of {@code nanos}: the first whose bound is at least it, else the +Inf one. */
    static int bucket(long nanos) {
        long[] b = BOUNDS_NANOS;
        int i = 0;
        while (i < b.length && nanos > b[i]) {
            i++;
        }
        return i;
    }
}
