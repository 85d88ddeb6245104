package io.gosched.bench.compare;

import java.util.DoubleSummaryStatistics;
import java.util.Locale;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The quiet-machine rule of the comparison: a table is only fit for the README when the machine
 * was quiet when it started, i.e. the 1-minute load average was at most {@code --max-load}
 * (default 1.0, issue 20). A full run on a busier machine is refused unless {@code --allow-noisy}
 * is given, and then its table says "NOISY" in its header and its file name; a {@code --quick}
 * run (a smoke run, never for the README) is never refused, only marked.
 *
 * <p>The build that {@code compare.sh} runs first raises the load by itself, so the driver first
 * waits up to {@code --wait-quiet} seconds for the load to come down (the 1-minute average decays
 * by e in 60 s once the build has ended: from 2 to 1 in about 40 s).
 *
 * <p>The load average counts only this guest's runnable threads. On a virtual machine the host
 * may also run other guests on our vCPUs, and then every figure of a round slows by the same
 * share whatever the load average says: measured on the 2-core box (2026-12-03), 3-16% of the
 * CPU time was stolen during a quiet-by-load ping-pong run, and the same process's rounds
 * spread over 2x. That is recorded next to the load average ({@link #stealShare}), not used to
 * refuse a run: the ratios are taken within a round, where every peer pays the same.
 */
final class QuietGuard {
    enum Verdict { QUIET, NOISY, REFUSE }

    private QuietGuard() {}

    /** The 1-minute load average of a {@code /proc/loadavg} text, NaN when it has none. */
    static double oneMinute(String loadavg) {
        try {
            return Double.parseDouble(loadavg.trim().split("\\s+")[0]);
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * The aggregate CPU times of a {@code /proc/stat} text (its first line, {@code cpu  user nice
     * system idle iowait irq softirq steal ...}, in clock ticks), or null when it has none.
     */
    static long[] cpuTimes(String procStat) {
        if (procStat == null) return null;
        String first = procStat.lines().findFirst().orElse("").trim();
        String[] f = first.split("\\s+");
        if (f.length < 9 || !f[0].equals("cpu")) return null;
        long[] t = new long[8];
        try {
            for (int i = 0; i < 8; i++) t[i] = Long.parseLong(f[i + 1]);
        } catch (NumberFormatException e) {
            return null;
        }
        return t;
    }

    /**
     * The share of the CPU time between two {@link #cpuTimes} readings that the hypervisor gave
     * to other guests (steal, the eighth field), as a fraction; NaN when either reading is
     * missing or no time passed.
     */
    static double stealShare(long[] before, long[] after) {
        if (before == null || after == null) return Double.NaN;
        long total = 0;
        for (int i = 0; i < 8; i++) total += after[i] - before[i];
        return total <= 0 ? Double.NaN : (double) (after[7] - before[7]) / total;
    }

    /**
     * The report's line on steal: the share over the measured rounds and the least and most of
     * one round.
     */
    static String stealNote(double overall, java.util.List<Double> perRound) {
        String head = "- Host CPU steal (time the hypervisor gave this VM's vCPUs to other guests; the load average"
                + " does not count it): ";
        if (Double.isNaN(overall)) return head + "unknown (no /proc/stat)\n";
        DoubleSummaryStatistics r = perRound.stream().mapToDouble(Double::doubleValue)
                .filter(d -> !Double.isNaN(d)).summaryStatistics();
        String rounds = r.getCount() == 0 ? ""
                : String.format(Locale.ROOT, ", %.1f–%.1f%% per round", r.getMin() * 100, r.getMax() * 100);
        return head + String.format(Locale.ROOT, "%.1f%% over the measured rounds%s%n", overall * 100, rounds);
    }

    /**
     * What to do with a run that starts at this load. An unknown load (not Linux) cannot be
     * called quiet.
     */
    static Verdict verdict(double load, double maxLoad, boolean quick, boolean allowNoisy) {
        if (!Double.isNaN(load) && load <= maxLoad) return Verdict.QUIET;
        return quick || allowNoisy ? Verdict.NOISY : Verdict.REFUSE;
    }

    /**
     * Polls the load every {@code pollSeconds} until it is at most maxLoad or waitSeconds have
     * passed; returns the last reading (NaN readings are not waited for).
     */
    static double waitForQuiet(Supplier<String> loadavg, double maxLoad, long waitSeconds, long pollSeconds,
                               LongConsumer sleepSeconds) {
        double load = oneMinute(loadavg.get());
        for (long waited = 0; waited < waitSeconds && !Double.isNaN(load) && load > maxLoad; waited += pollSeconds) {
            sleepSeconds.accept(pollSeconds);
            load = oneMinute(loadavg.get());
        }
        return load;
    }

    /** The table's header line for a noisy run; empty for a quiet one. */
    static String noisyNote(Verdict v, double load, double maxLoad) {
        if (v != Verdict.NOISY) return "";
        return String.format(Locale.ROOT, "> **NOISY**: the 1-minute load average was %s at the start, above %.2f:"
                + " other work shared the cores, so these figures are not for the README.%n%n",
                Double.isNaN(load) ? "unknown" : String.format(Locale.ROOT, "%.2f", load), maxLoad);
    }

    /** Why a run was refused, naming the flags that change it. */
    static String refusal(double load, double maxLoad, long waitedSeconds) {
        return String.format(Locale.ROOT, "compare: the 1-minute load average is %s (above %.2f after waiting up to %d s):"
                + " the machine is not quiet enough for a table. Stop what else runs, or pass --allow-noisy"
                + " (the table is then marked NOISY), --max-load L or --wait-quiet S.",
                Double.isNaN(load) ? "unknown" : String.format(Locale.ROOT, "%.2f", load), maxLoad, waitedSeconds);
    }
}
