import java.lang.reflect.Constructor;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * Probe (not part of the build): the floor under "goroutines as virtual threads carried by our
 * own Ms", the alternative docs/scheduler.md weighs ("The current thread: the decision"). Two
 * virtual threads alternate through LockSupport.park/unpark on a custom scheduler that is one
 * platform thread draining a queue (the JDK's package-private
 * ThreadBuilders.VirtualThreadBuilder(Executor), reached by reflection): a round trip is two
 * park/unpark hand-offs, i.e. two mounts and two unmounts, with no run queue, no runnext, no
 * P of ours. Next to it, in the same JVM and rounds, the same round trip as two raw
 * Continuation.run/yield pairs (the floor of what gosched does now, ContinuationFloor).
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -d /tmp/probe bench/probes/VirtualThreadFloor.java
 * java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
 *      -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -cp /tmp/probe VirtualThreadFloor
 * </pre>
 * (Run it with and without the two -XX options: virtual threads do not need them.)
 */
public class VirtualThreadFloor {

    /** One platform thread running whatever the JDK submits (a mount of a virtual thread). */
    static final class OneThreadScheduler implements Executor {
        final ConcurrentLinkedQueue<Runnable> q = new ConcurrentLinkedQueue<>();
        final Thread carrier = Thread.ofPlatform().daemon().name("carrier").start(this::loop);
        volatile boolean parked;

        @Override
        public void execute(Runnable task) {
            q.add(task);
            if (parked) {
                LockSupport.unpark(carrier);
            }
        }

        private void loop() {
            for (;;) {
                Runnable r = q.poll();
                if (r != null) {
                    r.run();
                    continue;
                }
                parked = true;
                if (q.isEmpty()) {
                    LockSupport.park(this);
                }
                parked = false;
            }
        }
    }

    static Thread.Builder.OfVirtual builder(Executor scheduler) throws Exception {
        Class<?> c = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder");
        Constructor<?> k = c.getDeclaredConstructor(Executor.class);
        k.setAccessible(true);
        return (Thread.Builder.OfVirtual) k.newInstance(scheduler);
    }

    static volatile Thread a;
    static volatile Thread b;

    /** ns per round trip of two virtual threads unparking each other n times. */
    static double vtRoundTrip(Thread.Builder.OfVirtual vb, int n) throws Exception {
        CountDownLatch done = new CountDownLatch(2);
        long[] t = new long[2];
        b = vb.unstarted(() -> {
            for (int i = 0; i < n; i++) {
                LockSupport.park();
                LockSupport.unpark(a);
            }
            done.countDown();
        });
        a = vb.unstarted(() -> {
            t[0] = System.nanoTime();
            for (int i = 0; i < n; i++) {
                LockSupport.unpark(b);
                LockSupport.park();
            }
            t[1] = System.nanoTime();
            done.countDown();
        });
        b.start();
        a.start();
        done.await();
        return (t[1] - t[0]) / (double) n;
    }

    static final ContinuationScope S = new ContinuationScope("floor");
    static long sink;

    /** ns per "round trip" of two continuations run and yielded in turn by one thread. */
    static double continuationRoundTrip(int n) {
        Continuation x = new Continuation(S, () -> { for (;;) { sink++; Continuation.yield(S); } });
        Continuation y = new Continuation(S, () -> { for (;;) { sink--; Continuation.yield(S); } });
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            x.run();
            y.run();
        }
        return (System.nanoTime() - t0) / (double) n;
    }

    public static void main(String[] args) throws Exception {
        int n = 1_000_000;
        Thread.Builder.OfVirtual vb = builder(new OneThreadScheduler());
        for (int r = 0; r < 7; r++) {
            double vt = vtRoundTrip(vb, n);
            double cont = continuationRoundTrip(n);
            System.out.printf("round %d: virtual threads on a one-thread custom scheduler %.0f ns/round trip; "
                    + "two raw continuation run/yield pairs %.0f ns%n", r, vt, cont);
        }
    }
}
