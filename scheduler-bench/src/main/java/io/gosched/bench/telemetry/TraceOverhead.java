package io.gosched.bench.telemetry;

import io.gosched.runtime.Chan;
import io.gosched.runtime.FlightRecorder;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Trace;
import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a trace recording costs, measured so that the machine's drift cancels out: in one JVM,
 * chunks of a workload run alternately with tracing off and on ({@link Trace.Timestamps
 * INTERPOLATED} or {@code EXACT}), the order flipping every pair, and each pair gives one ratio.
 * Reports the median ratio and its quartiles. JMH's {@code TelemetryCostBenchmark} measures the
 * same workloads in separate forks; on a shared 2-core VM its run-to-run drift (10–20%) is as large
 * as the effect, which this harness does not suffer from.
 *
 * <p>Caveat: the "off" chunks run code the JIT compiled with the tracing branches taken, as in a
 * service that has recorded a trace before; a JVM that never traced prunes them.
 *
 * <pre>java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -Xms3g -Xmx3g \
 *     -cp scheduler-bench/target/benchmarks.jar io.gosched.bench.telemetry.TraceOverhead [gomaxprocs] [pairs] [flight]</pre>
 *
 * <p>Each workload is measured with a recording of each {@link Trace.Timestamps} mode and with the
 * flight recorder ({@code trace=flight}); a third argument {@code flight} measures only the latter.
 */
public final class TraceOverhead {

    /** Operations per chunk. */
    static final int OPS = 100_000;
    static final int WARMUP_PAIRS = 10;

    private TraceOverhead() {
    }

    public static void main(String[] args) throws Exception {
        int procs = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int pairs = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        boolean flightOnly = args.length > 2 && args[2].equals("flight");
        if (procs < 1 || pairs < 4) {
            throw new IllegalArgumentException("usage: TraceOverhead [gomaxprocs >= 1] [pairs >= 4]");
        }
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build())) {
            for (String workload : new String[] {"spawn", "pingpong"}) {
                if (!flightOnly) {
                    for (Trace.Timestamps ts : Trace.Timestamps.values()) {
                        System.out.println(measure(rt, workload, ts, pairs, OPS));
                    }
                }
                System.out.println(measure(rt, workload, null, pairs, OPS));
            }
        }
    }

    /**
     * Runs WARMUP_PAIRS + pairs pairs of chunks of {@code ops} operations; one line of result.
     * timestamps null: the "on" chunks run with the flight recorder (10 s window) instead of a
     * recording.
     */
    static String measure(GoRuntime rt, String workload, Trace.Timestamps timestamps, int pairs, int ops)
            throws Exception {
        double[] off = new double[pairs];
        double[] on = new double[pairs];
        double[] ratio = new double[pairs];
        for (int r = -WARMUP_PAIRS; r < pairs; r++) {
            double[] t = new double[2];
            for (int k = 0; k < 2; k++) {
                boolean traced = ((r & 1) == 0) == (k == 0);
                Trace.Recording rec = traced && timestamps != null ? rt.trace().start(65_536, timestamps) : null;
                FlightRecorder flight = traced && timestamps == null ? rt.trace().flightRecorder(Duration.ofSeconds(10)) : null;
                long t0 = System.nanoTime();
                run(rt, workload, ops);
                t[traced ? 1 : 0] = (System.nanoTime() - t0) / (double) ops;
                if (rec != null) {
                    rec.stop();
                }
                if (flight != null) {
                    flight.close();
                }
            }
            if (r >= 0) {
                off[r] = t[0];
                on[r] = t[1];
                ratio[r] = t[1] / t[0];
            }
        }
        Arrays.sort(off);
        Arrays.sort(on);
        Arrays.sort(ratio);
        return String.format(Locale.ROOT,
                "%-8s GOMAXPROCS=%d trace=%-12s off %5.0f ns/op  traced %5.0f ns/op  ratio median %.3f (quartiles %.3f–%.3f, %d pairs)",
                workload, rt.gomaxprocs(), timestamps == null ? "flight" : timestamps.name().toLowerCase(Locale.ROOT),
                off[pairs / 2], on[pairs / 2],
                ratio[pairs / 2], ratio[pairs / 4], ratio[3 * pairs / 4], pairs);
    }

    /** One chunk; throws if the workload computed a wrong result. */
    static void run(GoRuntime rt, String workload, int n) throws Exception {
        long check = switch (workload) {
            case "spawn" -> rt.run(() -> {
                AtomicLong sum = new AtomicLong();
                WaitGroup wg = new WaitGroup();
                wg.add(n);
                for (int i = 1; i <= n; i++) {
                    long v = i;
                    Go.go(() -> {
                        sum.addAndGet(v);
                        wg.done();
                    });
                }
                wg.await();
                return sum.get();
            });
            case "pingpong" -> rt.run(() -> {
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                Go.go(() -> {
                    for (long i = 0; i < n; i++) {
                        pong.send(ping.recv() + 1);
                    }
                });
                long s = 0;
                for (long i = 0; i < n; i++) {
                    ping.send(i);
                    s += pong.recv();
                }
                return s;
            });
            default -> throw new IllegalArgumentException("workload: " + workload);
        };
        if (check != (long) n * (n + 1) / 2) {
            throw new IllegalStateException(workload + ": wrong result " + check);
        }
    }
}
