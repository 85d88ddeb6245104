package io.gosched.runtime;

/**
 * The buckets and sampling of the scheduling-latency histogram (Go: /sched/latencies:seconds;
 * its snapshot is a {@link LatencyHistogram}): how long a goroutine waited between becoming
 * runnable and running. One in {@link #TRACKING_PERIOD} runnable transitions is timed (Go's
 * gTrackingPeriod sampling, with a longer period: see the constant); the count of each
 * bucket and the sum live in the P that ran the goroutine ({@code P.recordLatency}, written by its
 * owner only), and {@link Stats} adds them up over all Ps.
 *
 * <p>The clock is {@link System#nanoTime}, not the runtime's {@code nanoClock}: the histogram
 * measures real waiting, which a test clock that stands still must not hide.
 *
 * Go: runtime/histogram.go (timeHistogram), runtime/proc.go gTrackingPeriod
 */
final class LatencyBuckets {

    /**
     * One in this many G transitions is timed (Go: gTrackingPeriod, which is 8). A power of two.
     *
     * <p>JVM departure: a timed transition reads {@link System#nanoTime} twice, when the G becomes
     * runnable and when it runs, and on this project's VMs (kvm-clock) one read costs 25 ns against
     * a runnext hand-off of 150-200 ns; at Go's 1 in 8 the clock was 6 ns of every hand-off, 3-4%
     * of a ping-pong round trip. At 1 in 32 it is 1.6 ns, and the histogram still gets a sample per
     * 32 wake-ups: thousands a second under load, and the runtime's 3,000-goroutine warm-up alone
     * gives about a hundred at start. The sample stays uniform over transitions (the choice is
     * the P's random number, not the time), so the distribution is what it was, with wider error
     * bars at low rates (bench/results/NOTES.md, "Two clock reads fewer per hand-off").
     */
    static final int TRACKING_PERIOD = 32;

    /** Upper bounds of the buckets, in nanoseconds; a last +Inf bucket follows. */
    static final long[] BOUNDS_NANOS = {
        1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
        1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000, 100_000_000, 1_000_000_000
    };

    private LatencyBuckets() {}

    /** The time a runnable transition starts being timed, or 0 when it is not sampled (rnd: any random int). */
    static long trackedSince(int rnd) {
        return (rnd & (TRACKING_PERIOD - 1)) == 0 ? System.nanoTime() : 0;
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
