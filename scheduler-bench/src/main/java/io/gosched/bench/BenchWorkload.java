package io.gosched.bench;

import java.util.List;
import java.util.Locale;

/**
 * The workloads every peer runs, with their sizes and the result each must produce.
 *
 * <p>A workload is defined once here and implemented once per peer (gosched, virtual threads,
 * Kotlin coroutines, and Go in {@code bench/go/main.go}); each implementation returns a
 * {@code check} value that the driver compares with {@link #expected(long, long)}, so a run that
 * loses or duplicates work fails instead of looking fast. {@code n} and {@code m} are the two size
 * parameters; their meaning is per workload (see each constant).
 */
public enum BenchWorkload {
    /** n goroutines, each an atomic increment, then wait for all. Metric: ns per goroutine. check = n. */
    SPAWN("spawn", 1_000_000, 0, 100_000, 0, 2, List.of("ns_op")),
    /** n round trips over two unbuffered channels. Metric: ns per round trip. check = n(n+1)/2. */
    PINGPONG("pingpong", 1_000_000, 0, 100_000, 0, 2, List.of("ns_op")),
    /** {@link #PINGPONG} on ONE P (every peer's parallelism 1), as the gosched row. */
    PINGPONG1("pingpong1p", 1_000_000, 0, 100_000, 0, 1, List.of("ns_op")),
    /** 4 producers x 4 consumers over a 128-slot channel, n messages. Metric: ns per message. */
    PRODCONS("prodcons", 4_000_000, 128, 400_000, 128, 2, List.of("ns_op")),
    /** As prodcons over an unbuffered channel, n messages. Metric: ns per message. */
    PRODCONS0("prodcons0", 1_000_000, 0, 100_000, 0, 2, List.of("ns_op")),
    /** A daisy chain of n goroutines, m traversals. Metric: microseconds per traversal. check = n*m. */
    CHAIN("chain", 10_000, 100, 10_000, 10, 2, List.of("us_op")),
    /** {@link #CHAIN} on ONE P (every peer's parallelism 1). */
    CHAIN1("chain1p", 10_000, 100, 10_000, 10, 1, List.of("us_op")),
    /** fib(n), one goroutine spawned per call above n=2, joined through a 1-slot channel. Metric: ms. */
    FORKJOIN("forkjoin", 25, 0, 25, 0, 2, List.of("ms")),
    /** n goroutines each sleeping m times for 1..50 ms. Metrics: total ms, mean lateness ms. check = n*m. */
    TIMERS("timers", 100_000, 3, 10_000, 3, 2, List.of("total_ms", "late_ms")),
    /** 2 tight loops without safe points next to a 1 ms ticker for n ms. Metrics: ticker lateness. check = 1. */
    HOG("hog", 2_000, 0, 500, 0, 2, List.of("p50_ms", "p99_ms", "max_ms")),
    /** A receive loop over a 4-case select, 4 senders, n messages. Metric: ns per select. */
    SELECT("select", 1_000_000, 0, 100_000, 0, 2, List.of("ns_op")),
    /** Two goroutines yielding to each other n times on ONE P. Metric: ns per round trip. check = 2n. */
    GOSCHED("gosched", 1_000_000, 0, 100_000, 0, 1, List.of("ns_op")),
    /**
     * n goroutines, each blocked in a receive on its own unbuffered channel, after
     * {@link Measures#PARKED_WARMUP_PASSES} untimed passes of m. Metrics: bytes per parked
     * goroutine (its channel included) of the heap after GC (Go: HeapInuse + StackInuse after
     * runtime.GC()) and of the process's RSS ({@link Measures#parkedRun} says which baselines).
     * Then every goroutine is sent its index and adds it up: check = n(n-1)/2, so a goroutine
     * that was lost or never parked fails the run. Each run is a fresh process (see Compare): RSS
     * only grows within a process.
     */
    PARKED("parked", 1_000_000, 10_000, 100_000, 10_000, 2, List.of("heap_b", "rss_b")),
    /**
     * n wake-ups of one goroutine blocked in a receive, each by a non-blocking send from a
     * platform thread (as the service's Netty threads do) after an idle gap of
     * {@link #wakeGapNanos} (1-2 ms), so that every P and M has gone idle. Metrics: time from
     * the send to the receiver running, p50 and p99 in µs. check = n (samples not negative).
     */
    WAKEUP("wakeup", 2_000, 0, 300, 0, 2, List.of("p50_us", "p99_us"));

    /** Producers and consumers of the prodcons workloads; senders of select. */
    public static final int PARALLEL_PARTIES = 4;
    /** The hog workload's ticker period. */
    public static final long HOG_TICK_NANOS = 1_000_000;
    /** The timers workload sleeps 1..TIMERS_MAX_MS ms. */
    public static final int TIMERS_MAX_MS = 50;

    private final String id;
    private final long n, m, quickN, quickM;
    private final int procs;
    private final List<String> metrics;

    BenchWorkload(String id, long n, long m, long quickN, long quickM, int procs, List<String> metrics) {
        this.id = id;
        this.n = n;
        this.m = m;
        this.quickN = quickN;
        this.quickM = quickM;
        this.procs = procs;
        this.metrics = metrics;
    }

    public String id() { return id; }

    public long n(boolean quick) { return quick ? quickN : n; }

    public long m(boolean quick) { return quick ? quickM : m; }

    /**
     * GOMAXPROCS (and the matching parallelism of every peer) this workload runs under: 1 for the
     * one-P workloads (gosched, pingpong1p, chain1p), else 2, which --procs replaces.
     */
    public int procs() { return procs; }

    /** The metrics shown in the comparison table, lower is better for all of them. */
    public List<String> metrics() { return metrics; }

    public static BenchWorkload of(String id) {
        for (BenchWorkload w : values()) {
            if (w.id.equals(id.toLowerCase(Locale.ROOT))) return w;
        }
        throw new IllegalArgumentException("unknown workload " + id);
    }

    /** The check value a correct run of this workload at size (n, m) reports. */
    public long expected(long n, long m) {
        return switch (this) {
            case SPAWN -> n;
            case PINGPONG, PINGPONG1 -> n * (n + 1) / 2;
            case PRODCONS, PRODCONS0, SELECT -> {
                long total = messages(n);
                yield total * (total - 1) / 2;
            }
            case CHAIN, CHAIN1 -> n * m;
            case FORKJOIN -> fib(n);
            case TIMERS -> n * m;
            case HOG -> 1;
            case GOSCHED -> 2 * n;
            case PARKED -> n * (n - 1) / 2;
            case WAKEUP -> n;
        };
    }

    /**
     * The idle gap before wake-up i of the wakeup workload: 1.000..1.999 ms, the same sequence on
     * every peer (bench/go/main.go spells out the same formula). Long enough for every M to stop
     * spinning and park, short enough for 2,000 samples in a few seconds; varied so the sends do
     * not lock in phase with a periodic tick (sysmon, a GC timer).
     */
    public static long wakeGapNanos(long i) {
        return 1_000_000 + Math.floorMod(i * 7919, 1000) * 1_000L;
    }

    /** Messages actually sent by the 4-party workloads: n rounded down to a multiple of 4. */
    public static long messages(long n) {
        return n / PARALLEL_PARTIES * PARALLEL_PARTIES;
    }

    static long fib(long n) {
        long a = 1, b = 1;
        for (long i = 3; i <= n; i++) {
            long c = a + b;
            a = b;
            b = c;
        }
        return b;
    }

    /**
     * How long sleep j of goroutine i lasts in the timers workload: 1..50 ms, spread by a
     * golden-ratio multiplicative hash so that every peer (Go included) sleeps the same durations.
     */
    public static long sleepMillis(long i, long j) {
        long h = (i * 3 + j + 1) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 32;
        return 1 + Long.remainderUnsigned(h, TIMERS_MAX_MS);
    }
}
