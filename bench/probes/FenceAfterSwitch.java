import java.util.concurrent.atomic.AtomicInteger;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * Probe (not part of the build): what a serializing instruction (a CAS, a volatile store, G1's
 * card-marking fence) costs right after a continuation switch, whose freeze has just copied the
 * frames into the stack chunk. If the first fence after a freeze had to drain all of those
 * stores, removing one of the scheduler's fences would only move that cost to the next one;
 * measured, each costs about the same as one in a loop of its own. Measured 2026-12-03 on the
 * 2-core box, two runs: a run + yield pair with 6 frames 201 / 269 ns, with 1, 2, 4, 8 atomic
 * increments after it 209 / 278, 224 / 284, 247 / 289, 261 / 332 ns; 8 increments alone 77 /
 * 94 ns. So 6-12 ns a fence, whether or not a freeze came just before, and the scheduler's
 * dozen or so per switch are a real part of the ~200 ns it adds to the pair.
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -d /tmp/probe bench/probes/FenceAfterSwitch.java
 * java -XX:+UseCompactObjectHeaders --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp /tmp/probe FenceAfterSwitch
 * </pre>
 */
public class FenceAfterSwitch {
    static final ContinuationScope S = new ContinuationScope("fence");
    static long sink;
    static final AtomicInteger[] COUNTERS = new AtomicInteger[8];

    static void deep(int n) {
        if (n == 0) {
            sink++;
            Continuation.yield(S);
        } else {
            deep(n - 1);
        }
    }

    public static void main(String[] a) {
        for (int i = 0; i < COUNTERS.length; i++) COUNTERS[i] = new AtomicInteger();
        int n = 3_000_000;
        Continuation c = new Continuation(S, () -> { while (true) deep(6); });
        for (int pass = 0; pass < 3; pass++) {
            for (int fences : new int[] {0, 1, 2, 4, 8}) {
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    c.run();
                    for (int f = 0; f < fences; f++) COUNTERS[f].incrementAndGet();
                }
                System.out.printf("pass %d, %d fences after each pair: %.1f ns%n", pass, fences, (System.nanoTime() - t0) / (double) n);
            }
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) for (int f = 0; f < 8; f++) COUNTERS[f].incrementAndGet();
        System.out.printf("8 fences alone: %.1f ns%n", (System.nanoTime() - t0) / (double) n);
    }
}
