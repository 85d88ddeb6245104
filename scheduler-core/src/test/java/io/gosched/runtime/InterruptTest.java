package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What Thread.interrupt() means for goroutines (see "Interrupts" in M): a goroutine's own
 * interrupt status lasts until its next scheduling point and never reaches another goroutine,
 * a sleeping M or the poller.
 */
@Timeout(60)
class InterruptTest {

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    /** CPU time of this runtime's M threads, in nanoseconds. */
    private static long mCpuNanos(GoRuntime rt) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<M> ms;
        rt.sched().lock.lock();
        try {
            ms = new ArrayList<>(rt.sched().allm);
        } finally {
            rt.sched().lock.unlock();
        }
        long sum = 0;
        for (M m : ms) {
            long t = threads.getThreadCpuTime(m.threadId());
            if (t > 0) {
                sum += t;
            }
        }
        return sum;
    }

    /**
     * The catch (InterruptedException) idiom in goroutine code (re-assert the status, carry on):
     * afterwards the idle runtime sleeps. Before, the interrupted M spun in notesleep and the
     * poller in netpoll: 455-471 ms of CPU per 501 ms of wall time.
     */
    @Test
    void anInterruptedGoroutineLeavesAnIdleRuntimeAsleep() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            for (int i = 0; i < 8; i++) {
                rt.run(() -> {
                    Thread.currentThread().interrupt();
                    return null;
                });
                rt.go(() -> {
                    Go.sleep(Duration.ofMillis(1)); // parks: the M goes idle or polls for the timer
                    Thread.currentThread().interrupt();
                });
            }
            Thread.sleep(200); // let everything finish and the Ms go to sleep
            long cpu0 = mCpuNanos(rt);
            long wall0 = System.nanoTime();
            Thread.sleep(500);
            long cpu = mCpuNanos(rt) - cpu0;
            long wall = System.nanoTime() - wall0;
            assertThat((double) cpu / wall).as("share of one CPU the idle Ms used (%d ms in %d ms)", cpu / 1_000_000, wall / 1_000_000)
                    .isLessThan(0.05);
        }
    }

    /**
     * The next goroutine on the same M does not inherit the status: a Thread.sleep in its syscall
     * completes, its interruptible work is not interrupted.
     */
    @Test
    void anInterruptDoesNotLeakIntoTheNextGoroutine() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            for (int i = 0; i < 20; i++) {
                AtomicReference<String> seen = new AtomicReference<>();
                rt.run(() -> {
                    Chan<Boolean> done = Chan.make();
                    Go.go(() -> {
                        Thread.currentThread().interrupt(); // and ends without clearing it
                    });
                    Go.go(() -> {
                        boolean flagged = Thread.currentThread().isInterrupted();
                        String slept;
                        try {
                            slept = Go.syscall(() -> {
                                Thread.sleep(1);
                                return "slept";
                            });
                        } catch (InterruptedException e) {
                            slept = "interrupted";
                        } catch (Exception e) {
                            slept = e.toString();
                        }
                        seen.set((flagged ? "flagged " : "") + slept);
                        done.send(true);
                    });
                    done.recv();
                    return null;
                });
                assertThat(seen.get()).as("round %d", i).isEqualTo("slept");
            }
        }
    }

    /** Within one turn the goroutine sees its own interrupt, as any Java code would. */
    @Test
    void aGoroutineSeesItsOwnInterruptUntilItsNextSchedulingPoint() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            String r = rt.run(() -> {
                Thread.currentThread().interrupt();
                boolean before = Thread.currentThread().isInterrupted();
                Go.yield(); // a scheduling point: the M clears it
                boolean after = Thread.currentThread().isInterrupted();
                return before + " " + after;
            });
            assertThat(r).isEqualTo("true false");
        }
    }
}
