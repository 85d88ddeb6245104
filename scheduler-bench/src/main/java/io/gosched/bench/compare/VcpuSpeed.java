package io.gosched.bench.compare;

import java.io.IOException;
import java.util.Arrays;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How fast each vCPU runs during a round, which neither the load average nor the steal share
 * shows. On the 2-core box the host runs each vCPU at about half speed for tens of seconds at a
 * time, one vCPU independently of the other, with no steal in {@code /proc/stat}
 * (bench/results/NOTES.md, 2026-12-04 evening: two pinned CPU-bound loops 1.8x apart on an idle
 * guest). A thread's speed is then the speed of the vCPU it lands on, and one process of a peer
 * can run 1.4x slower than the next for no reason of its own.
 *
 * <p>The measure: the same shell loop pinned to each vCPU ({@code taskset -c i}), all started at
 * once, timed from start to exit, before each workload of a measured round. The spread is the
 * slowest time over the fastest; a round reports its largest. It never refuses a run (the ratios
 * come from rounds interleaved across peers); it tells the reader how far the rounds can be
 * trusted, and a run with most rounds uneven is marked as not for the README.
 */
final class VcpuSpeed {

    /** About 0.1–0.2 s of a busy POSIX shell on this box: short, and long next to fork and exec. */
    static final String LOOP = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";

    /** A round whose vCPUs differed by more than this in a sample is counted as uneven in the report. */
    static final double UNEVEN = 1.3;

    private VcpuSpeed() {}

    /**
     * Seconds the loop took on each of vCPUs 0..cpus-1, run side by side; null when taskset is
     * missing, a run failed or took over 10 s.
     */
    static double[] measure(int cpus) {
        Process[] ps = new Process[cpus];
        long[] start = new long[cpus];
        double[] seconds = new double[cpus];
        try {
            for (int i = 0; i < cpus; i++) {
                start[i] = System.nanoTime();
                ps[i] = new ProcessBuilder("taskset", "-c", Integer.toString(i), "sh", "-c", LOOP)
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            }
            for (int i = 0; i < cpus; i++) {
                ps[i].onExit().get(10, TimeUnit.SECONDS);
                seconds[i] = (System.nanoTime() - start[i]) / 1e9;
                if (ps[i].exitValue() != 0) return null;
            }
            return seconds;
        } catch (IOException | ExecutionException | TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            for (Process p : ps) {
                if (p != null) p.destroyForcibly();
            }
        }
    }

    /** The slowest vCPU's time over the fastest's; NaN when unknown. */
    static double spread(double[] seconds) {
        if (seconds == null || seconds.length == 0) return Double.NaN;
        DoubleSummaryStatistics s = Arrays.stream(seconds).summaryStatistics();
        return s.getMin() > 0 ? s.getMax() / s.getMin() : Double.NaN; // a NaN time makes the minimum NaN
    }

    /**
     * The warning under the report's title when more than half of the measured rounds (with a
     * known spread) were uneven: its figures then mix the speeds of two vCPUs, as a noisy run's
     * mix other work, and are not for the README. Empty otherwise.
     */
    static String unevenWarning(List<Double> perRound) {
        Summary r = Summary.of(perRound);
        if (r.known == 0 || 2 * r.uneven <= r.known) return "";
        return String.format(Locale.ROOT, "> **UNEVEN vCPUs**: in %d of %d measured rounds one vCPU ran more than %.1fx"
                + " slower than the other (up to %.2fx): the host slowed it, so these figures are not for the README.%n%n",
                r.uneven, r.known, UNEVEN, r.hi);
    }

    /** The report's line: the spread's range over the measured rounds and how many were uneven. */
    static String note(List<Double> perRound) {
        String head = "- vCPU speed (one shell loop pinned to each vCPU before each workload, the most uneven sample"
                + " of a round; the host can slow one vCPU by up to 2x unseen by the guest): ";
        Summary r = Summary.of(perRound);
        if (r.known == 0) return head + "unknown (no taskset, or one vCPU)\n";
        return head + String.format(Locale.ROOT, "slowest/fastest %.2f–%.2f per round; %d of %d rounds above %.1f%n",
                r.lo, r.hi, r.uneven, r.known, UNEVEN);
    }

    /** The rounds with a known spread, how many of them were uneven, and the least and most spread. */
    private record Summary(long known, long uneven, double lo, double hi) {
        static Summary of(List<Double> perRound) {
            DoubleSummaryStatistics s = perRound.stream().mapToDouble(Double::doubleValue)
                    .filter(d -> !Double.isNaN(d)).summaryStatistics();
            long uneven = perRound.stream().filter(d -> d > UNEVEN).count();
            return new Summary(s.getCount(), uneven, s.getMin(), s.getMax());
        }
    }
}
