import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * Probe (not part of the build): the floor under any scheduler built on JDK continuations, one
 * Continuation.run + yield pair on one thread, no queues, no locks. A goroutine switch costs at
 * least this; a Gosched or ping-pong round trip costs two. Measured 2026-11-29 on the 2-core box:
 * 175-220 ns per pair, 220-450 ns with 6 frames on the continuation's stack.
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -d /tmp/probe bench/probes/ContinuationFloor.java
 * java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp /tmp/probe ContinuationFloor
 * </pre>
 */
public class ContinuationFloor {
    static final ContinuationScope S = new ContinuationScope("floor");
    static long sink;
    public static void main(String[] a) {
        int n = 5_000_000;
        Continuation c = new Continuation(S, () -> { while (true) { sink++; Continuation.yield(S); } });
        for (int r = 0; r < 6; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) c.run();
            System.out.printf("run+yield pair: %.1f ns%n", (System.nanoTime() - t0) / (double) n);
        }
        // With a few frames on the continuation's stack, as a goroutine parked in Chan.recv has.
        Continuation d = new Continuation(S, () -> { while (true) deep(6); });
        for (int r = 0; r < 6; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) d.run();
            System.out.printf("run+yield pair, 6 extra frames: %.1f ns%n", (System.nanoTime() - t0) / (double) n);
        }
    }
    static void deep(int k) { if (k == 0) { sink++; Continuation.yield(S); } else { deep(k - 1); sink--; } }
}
