package io.gosched.bench.agent;

import io.gosched.bench.HogState;
import io.gosched.bench.Measures;
import io.gosched.bench.Result;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedStats;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.sync.WaitGroup;
import io.gosched.time.Ticker;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The hog workload of the peer comparison (hogs running {@link HogState#spin}, a loop with no
 * safe point, next to a goroutine receiving a 1 ms ticker), reported with what the preemption
 * agent changes: ticker lateness, the peak number of threads the runtime used, preemptions,
 * spare-P hand-offs and how far the hogs got. Run it twice in the same session, once plain
 * (sysmon's spare-P hand-off keeps the ticker going) and once with the agent told about
 * {@code io.gosched.bench.HogState} (the hogs are preempted at the quantum); bench/agent.sh does.
 *
 * <p>Usage: {@code AgentHog <procs> <hogs> <millis> <rounds>}; one line per round after one
 * untimed warm-up round.
 */
public final class AgentHog {
    private AgentHog() {}

    public static void main(String[] args) throws Exception {
        int procs = Integer.parseInt(args[0]);
        int hogs = Integer.parseInt(args[1]);
        long millis = Long.parseLong(args[2]);
        int rounds = Integer.parseInt(args[3]);
        boolean agent = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.startsWith("-javaagent:") && a.contains("scheduler-agent"));
        for (int r = -1; r < rounds; r++) {
            String line = round(procs, hogs, millis, agent);
            if (r >= 0) {
                System.out.println(line);
            }
        }
    }

    static String round(int procs, int hogs, long millis, boolean agent) throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build())) {
            SchedStats before = rt.stats();
            AtomicInteger peakThreads = new AtomicInteger(before.threads());
            HogState st = new HogState();
            long[] iterations = new long[hogs];
            Thread sampler = Thread.ofPlatform().daemon().name("agent-hog-sampler").start(() -> {
                while (!st.stop) {
                    peakThreads.accumulateAndGet(rt.stats().threads(), Math::max);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            Result res = rt.run(() -> {
                long[] gaps = new long[(int) (millis * 2 + 16)];
                int gapCount = 0;
                Ticker ticker = Ticker.newTicker(Duration.ofMillis(1));
                long prev = System.nanoTime();
                WaitGroup wg = new WaitGroup();
                wg.add(hogs);
                for (int h = 0; h < hogs; h++) {
                    int me = h;
                    Go.go(() -> {
                        iterations[me] = HogState.spin(st);
                        wg.done();
                    });
                }
                Measures.hogStopper(millis, () -> st.stop = true);
                while (true) {
                    ticker.c().recv();
                    long now = System.nanoTime();
                    if (gapCount < gaps.length) {
                        gaps[gapCount++] = now - prev;
                    }
                    prev = now;
                    if (st.stop) {
                        break;
                    }
                }
                ticker.stop();
                wg.await();
                return Measures.hog(millis, gaps, gapCount, iterations[0], hogs > 1 ? iterations[1] : 0);
            });
            sampler.join();
            SchedStats after = rt.stats();
            long total = 0;
            for (long i : iterations) {
                total += i;
            }
            return String.format(Locale.ROOT,
                    "mode=%s procs=%d hogs=%d check=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f ticks=%.0f peak_threads=%d"
                            + " preemptions=%d spare_handoffs=%d hog_giga_iterations=%.2f",
                    agent ? "agent" : "spare-p", procs, hogs, res.check(), res.metrics().get("p50_ms"),
                    res.metrics().get("p99_ms"), res.metrics().get("max_ms"), res.metrics().get("ticks"),
                    peakThreads.get(), after.preemptions() - before.preemptions(),
                    after.handoffsByCause().preempt() - before.handoffsByCause().preempt(), total / 1e9);
        }
    }
}
