package io.gosched.runtime;

import io.gosched.time.Time;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;

/**
 * Probe (not part of the build): the heap held by abandoned {@code Time.after(1h)} channels.
 *
 * <p>Two shapes, each 1,000,000 timers, from one goroutine of a 2-P runtime:
 * <ul>
 *   <li>{@code after}: {@code Time.after(Duration.ofHours(1))} called and dropped;</li>
 *   <li>{@code select}: the Go idiom that leaks before Go 1.23, a select loop whose other case
 *       is always ready: {@code select { case <-ready: case <-time.After(time.Hour): }};</li>
 *   <li>{@code parked}: the same select on an unbuffered channel fed by another goroutine, so
 *       that many of the selects park (and put their timer in a heap) before the send wins.</li>
 * </ul>
 * After each shape the probe runs System.gc() three times and prints the used heap (MemoryMXBean)
 * minus the used heap measured the same way before it, and the number of timers still in the
 * heaps of the Ps.
 *
 * <pre>
 * ./mvnw -B -ntp -o -q -pl scheduler-core compile
 * javac -cp scheduler-core/target/classes -d /tmp/probe bench/probes/AbandonedTimersProbe.java
 * java -Xmx2g --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread \
 *     -cp scheduler-core/target/classes:/tmp/probe io.gosched.runtime.AbandonedTimersProbe
 * </pre>
 */
public class AbandonedTimersProbe {
    static final int N = Integer.getInteger("n", 1_000_000);

    static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static int heapedTimers(GoRuntime rt) {
        int n = 0;
        for (P pp : rt.sched().allp) {
            if (pp != null) {
                n += pp.timers.size();
            }
        }
        return n;
    }

    public static void main(String[] a) throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Time.after(Duration.ofHours(1)); // load the classes before the baseline
                long base = usedAfterGc();
                for (int i = 0; i < N; i++) {
                    Time.after(Duration.ofHours(1));
                }
                long used = usedAfterGc() - base;
                System.out.printf("after : %,d abandoned Time.after(1h): %,d bytes retained (%.1f MiB, %.0f B/timer), %,d timers heaped%n",
                        N, used, used / 1048576.0, (double) used / N, heapedTimers(rt));
                return null;
            });
        }
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Instant> ready = Chan.make(1);
                long base = usedAfterGc();
                for (int i = 0; i < N; i++) {
                    ready.send(Instant.EPOCH);
                    Select.select(Select.recv(ready), Select.recv(Time.after(Duration.ofHours(1))));
                }
                long used = usedAfterGc() - base;
                System.out.printf("select: %,d select loops over Time.after(1h): %,d bytes retained (%.1f MiB, %.0f B/timer), %,d timers heaped%n",
                        N, used, used / 1048576.0, (double) used / N, heapedTimers(rt));
                return null;
            });
        }
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Instant> c = Chan.make();
                Go.go(() -> {
                    for (int i = 0; i < N; i++) {
                        c.send(Instant.EPOCH);
                    }
                });
                long base = usedAfterGc();
                int blocked = 0;
                for (int i = 0; i < N; i++) {
                    Chan<Instant> after = Time.after(Duration.ofHours(1));
                    if (c.waitingSenders() == 0) {
                        blocked++; // this select will most likely park, with the timer heaped
                    }
                    Select.select(Select.recv(c), Select.recv(after));
                }
                long used = usedAfterGc() - base;
                System.out.printf("parked: %,d selects (%,d of them found no sender and parked) over Time.after(1h): %,d bytes retained (%.1f MiB, %.0f B/timer), %,d timers heaped%n",
                        N, blocked, used, used / 1048576.0, (double) used / N, heapedTimers(rt));
                return null;
            });
        }
    }
}
