package io.gosched.runtime;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Probe for the lead (not part of the build): does Thread.currentThread() go stale across a
 * goroutine's yield once C2 compiles the goroutine's code?
 *
 * <p>C2 loads the current thread as an immutable value unless the compiled method is annotated
 * {@code @ChangesCurrentThread}, which only JDK classes can use; so in a compiled loop that
 * inlines Go.yield, the currentThread() (and with it M.current(), getg(), ThreadLocal caches) from
 * before the yield is reused after the goroutine resumed on another M. Found 2026-11-29: stale
 * after ~70k iterations, then the runtime dies with "goroutine N yielded without a reason";
 * never with -Xint.
 *
 * <pre>
 * javac --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp scheduler-core/target/classes -d /tmp/probe bench/probes/StaleThreadProbe.java
 * java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp scheduler-core/target/classes:/tmp/probe io.gosched.runtime.StaleThreadProbe
 * </pre>
 */
public class StaleThreadProbe {
    static final AtomicLong stale = new AtomicLong(), migrations = new AtomicLong(), checks = new AtomicLong();

    static void loop(int n) {
        G gp = Scheduler.getg();
        for (int i = 0; i < n; i++) {
            Thread before = Thread.currentThread();
            Go.yield();
            Thread after = Thread.currentThread();
            M truth = gp.m;           // set by execute() on the M that resumed us
            checks.incrementAndGet();
            if (truth != before) migrations.incrementAndGet();
            if (after != truth && stale.incrementAndGet() < 4) System.out.println("STALE: resumed on " + truth.getName() + " but currentThread() says " + after.getName() + " (iteration " + i + ")");
        }
    }

    public static void main(String[] a) throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            for (int r = 0; r < 6; r++) {
                rt.run(() -> {
                    io.gosched.sync.WaitGroup wg = new io.gosched.sync.WaitGroup();
                    wg.add(4);
                    for (int g = 0; g < 4; g++) Go.go(() -> { loop(200_000); wg.done(); });
                    wg.await();
                    return null;
                });
                System.out.println("checks " + checks + " migrations " + migrations + " stale currentThread " + stale);
            }
        }
    }
}
