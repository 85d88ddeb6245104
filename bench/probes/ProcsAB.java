import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Probe (not part of the build): what the second P costs a sequential hand-off workload. One
 * JVM alternates a 1-P and a 2-P runtime round by round (the machine's phases hit both alike)
 * and prints each side's figures and the per-round 2P/1P ratio, sorted. Workloads: "pingpong"
 * (1M round trips, ns each) and "chain" (10,000 goroutines, 100 traversals, µs each).
 * Measured 2026-12-02 on the 2-core box, after 2 warm-up rounds: ping-pong (10 rounds) 1P
 * 362-392 ns, 2P 389-491, 2P-1P 12-120 ns (median 32); chain (6 rounds) 1P 2101-2325 µs, 2P
 * 2315-2796, 2P/1P 1.02-1.29 (with recycled Gs, 8 rounds: 0.74-1.60).
 *
 * <pre>
 * ./mvnw -B -q -pl scheduler-bench -am -DskipTests package
 * java -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
 *   -Xms3g -Xmx3g -XX:+AlwaysPreTouch -cp scheduler-bench/target/benchmarks.jar bench/probes/ProcsAB.java pingpong 10
 * </pre>
 */
public class ProcsAB {

    static long pingpong(int procs) throws Exception {
        int n = 1_000_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build())) {
            return rt.run(() -> {
                Chan<Long> ping = Chan.make(), pong = Chan.make();
                Go.go(() -> {
                    for (long i = 0; i < n; i++) pong.send(ping.recv() + 1);
                });
                long t0 = System.nanoTime();
                for (long i = 0; i < n; i++) {
                    ping.send(i);
                    pong.recv();
                }
                return (System.nanoTime() - t0) / n;
            });
        }
    }

    static long chain(int procs) throws Exception {
        int n = 10_000, traversals = 100;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build())) {
            return rt.run(() -> {
                @SuppressWarnings("unchecked")
                Chan<Long>[] links = new Chan[n + 1];
                for (int i = 0; i <= n; i++) links[i] = Chan.make();
                for (int i = 0; i < n; i++) {
                    Chan<Long> in = links[i], out = links[i + 1];
                    Go.go(() -> {
                        for (long t = 0; t < traversals; t++) out.send(in.recv() + 1);
                    });
                }
                long t0 = System.nanoTime();
                for (long t = 0; t < traversals; t++) {
                    links[0].send(0L);
                    links[n].recv();
                }
                return (System.nanoTime() - t0) / 1000 / traversals;
            });
        }
    }

    public static void main(String[] a) throws Exception {
        boolean chain = a.length > 0 && a[0].equals("chain");
        int rounds = a.length > 1 ? Integer.parseInt(a[1]) : 10;
        List<Long> one = new ArrayList<>(), two = new ArrayList<>();
        List<Double> ratio = new ArrayList<>();
        for (int r = 0; r < rounds + 2; r++) {
            long x = chain ? chain(1) : pingpong(1);
            long y = chain ? chain(2) : pingpong(2);
            if (r >= 2) { // 2 warm-up rounds
                one.add(x);
                two.add(y);
                ratio.add(Math.round(100.0 * y / x) / 100.0);
            }
        }
        Collections.sort(one);
        Collections.sort(two);
        Collections.sort(ratio);
        String unit = chain ? "µs/traversal" : "ns/round trip";
        System.out.println("1P " + unit + " " + one + "\n2P " + unit + " " + two + "\n2P/1P per round " + ratio);
        System.exit(0);
    }
}
