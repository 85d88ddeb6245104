import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;

/**
 * Probe (not part of the build): rounds of a hand-off workload in one runtime, one line per
 * round ("round R X ns cpu C vcs V" or "round R X us cpu C vcs V": C is the process's CPU time over the same
 * span, all threads, in the same unit), for bench/probes/alternate-jars.sh. Workloads:
 * "pingpong" (n round trips, ns each; n defaults to 2,000,000), "gosched" (two goroutines
 * yielding n times each, ns per round trip, as compare.sh's gosched row on 1 P) and "chain"
 * (10,000 goroutines, 100 traversals, µs each).
 *
 * <pre>
 * java -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -XX:+UseCompactObjectHeaders \
 *   --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -Xms3g -Xmx3g -XX:+AlwaysPreTouch \
 *   -cp scheduler-bench/target/benchmarks.jar bench/probes/HandOffRounds.java pingpong 1 7
 * </pre>
 */
public class HandOffRounds {

    public static void main(String[] a) throws Exception {
        boolean chain = a[0].equals("chain");
        boolean gosched = a[0].equals("gosched");
        int procs = Integer.parseInt(a[1]);
        int rounds = Integer.parseInt(a[2]);
        int n = a.length > 3 ? Integer.parseInt(a[3]) : 2_000_000;
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build())) {
            for (int r = 0; r < rounds; r++) {
                long cs0 = voluntaryContextSwitches();
                long cpu0 = os.getProcessCpuTime();
                long x = rt.run(() -> chain ? chain() : gosched ? gosched(n) : pingpong(n));
                long ops = chain ? 100 : n; // per traversal, per round trip
                double cpu = (os.getProcessCpuTime() - cpu0) / (double) ops / (chain ? 1000 : 1);
                double cs = (voluntaryContextSwitches() - cs0) / (double) ops;
                System.out.printf("round %d %d %s cpu %.0f vcs %.4f%n", r, x, chain ? "us" : "ns", cpu, cs);
            }
        }
    }

    /** Voluntary context switches of every thread of this process so far (/proc/self/task/N/status). */
    static long voluntaryContextSwitches() throws java.io.IOException {
        long v = 0;
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
            for (var t : tasks.toList()) {
                try {
                    for (String l : java.nio.file.Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("voluntary_ctxt_switches:")) {
                            v += Long.parseLong(l.substring(24).trim());
                        }
                    }
                } catch (java.io.IOException gone) {
                    // a thread that ended meanwhile
                }
            }
        }
        return v;
    }

    static long pingpong(int n) {
        Chan<Long> ping = Chan.make();
        Chan<Long> pong = Chan.make();
        Go.go(() -> {
            for (long i = 0; i < n; i++) {
                pong.send(ping.recv() + 1);
            }
        });
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            ping.send(i);
            pong.recv();
        }
        return (System.nanoTime() - t0) / n;
    }

    static long gosched(int n) {
        Chan<Long> done = Chan.make(2);
        long t0 = System.nanoTime();
        for (int g = 0; g < 2; g++) {
            Go.go(() -> {
                for (long i = 0; i < n; i++) {
                    Go.yield();
                }
                done.send((long) n);
            });
        }
        done.recv();
        done.recv();
        return (System.nanoTime() - t0) / n;
    }

    static long chain() {
        int n = 10_000;
        int traversals = 100;
        @SuppressWarnings("unchecked")
        Chan<Long>[] links = new Chan[n + 1];
        for (int i = 0; i <= n; i++) {
            links[i] = Chan.make();
        }
        for (int i = 0; i < n; i++) {
            Chan<Long> in = links[i];
            Chan<Long> out = links[i + 1];
            Go.go(() -> {
                for (long t = 0; t < traversals; t++) {
                    out.send(in.recv() + 1);
                }
            });
        }
        long t0 = System.nanoTime();
        for (long t = 0; t < traversals; t++) {
            links[0].send(0L);
            links[n].recv();
        }
        return (System.nanoTime() - t0) / 1000 / traversals;
    }
}
