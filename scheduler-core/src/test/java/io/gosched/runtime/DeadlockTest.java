package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.time.Time;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go's "all goroutines are asleep - deadlock!" outside bubbles, proven by the garbage collector
 * (see Checkdead). Go: runtime/crash_test.go TestSimpleDeadlock, TestLockedDeadlock,
 * TestMainGoroutineID (testdata/testprog/deadlock.go); the rest are the JVM's own cases: a
 * platform thread, a timer or a running goroutine that can still act is never a deadlock.
 */
@Timeout(120)
class DeadlockTest {

    private static final String REASON = "all goroutines are asleep - deadlock!";

    private static GoRuntime runtime() {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).shutdownTimeout(Duration.ofSeconds(2)).build());
    }

    /** Receives on a channel nobody else has: blocked for ever. A method of its own, named in the dump. */
    private static void recvOnFreshChannel() {
        Chan<Integer> c = Chan.make();
        c.recv();
    }

    /** Go: TestSimpleDeadlock (main: select {} on nothing; here a receive nobody can answer) and TestMainGoroutineID. */
    @Test
    void testSimpleDeadlock() {
        try (GoRuntime rt = runtime()) {
            AtomicLong mainId = new AtomicLong();
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                mainId.set(Go.goid());
                recvOnFreshChannel();
                return null;
            }));
            assertEquals(REASON, e.reason());
            assertThat(e.getMessage()).startsWith(REASON + "\n\n").endsWith(e.dump());
            assertThat(e.dump()).startsWith("goroutine " + mainId.get() + " [chan receive")
                    .contains("recvOnFreshChannel");
        }
    }

    /** main and a goroutine it started, each waiting for the other: both asleep, both in the dump. */
    @Test
    void testTwoGoroutinesWaitingOnEachOther() {
        try (GoRuntime rt = runtime()) {
            AtomicLong childId = new AtomicLong();
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Chan<Integer> toChild = Chan.make();
                Chan<Integer> toMain = Chan.make();
                Chan<Boolean> started = Chan.make();
                Go.go(() -> {
                    childId.set(Go.goid());
                    started.send(true);
                    toMain.send(toChild.recv()); // waits for main, which waits for it
                });
                started.recv();
                return toMain.recv();
            }));
            assertEquals(REASON, e.reason());
            assertThat(e.dump()).contains("goroutine " + childId.get() + " [chan receive");
        }
    }

    /**
     * Go: TestLockedDeadlock (LockOSThread, then select {}). A wired goroutine parks mounted on its
     * thread, so the collector never reclaims it; select {} is proof enough, nothing can end it.
     */
    @Test
    void testLockedDeadlock() {
        GoRuntime rt = runtime();
        try {
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Go.lockOSThread();
                Select.select();
                return null;
            }));
            assertEquals(REASON, e.reason());
            assertThat(e.dump()).contains("[select (no cases)");
        } finally {
            rt.shutdown(Duration.ofMillis(200)); // the wired main stays parked: abandoned
        }
    }

    /**
     * The reason the proof needs the collector: main waits on a channel a platform thread holds,
     * and the thread sends after a few hundred ms while collections run. Every goroutine is
     * parked the whole time, and it is no deadlock.
     */
    @Test
    void platformThreadHoldingTheChannelIsNoDeadlock() throws Exception {
        try (GoRuntime rt = runtime()) {
            int got = rt.run(() -> {
                Chan<Integer> c = Chan.make();
                Thread t = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 15; i++) {
                        System.gc();
                        GoTesting.pause(20);
                    }
                    c.send(42);
                });
                int v = c.recv();
                t.join();
                return v;
            });
            assertEquals(42, got);
        }
    }

    /**
     * Main is asleep for ever, but another goroutine waits on a channel a platform thread holds:
     * not every goroutine is asleep until the thread woke it and it exited.
     */
    @Test
    void goroutineAPlatformThreadCanWakeDelaysTheDeadlock() {
        try (GoRuntime rt = runtime()) {
            AtomicBoolean woken = new AtomicBoolean();
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Chan<Integer> d = Chan.make();
                Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 15; i++) {
                        System.gc();
                        GoTesting.pause(20);
                    }
                    d.send(1);
                });
                Go.go(() -> {
                    d.recv();
                    woken.set(true);
                });
                recvOnFreshChannel();
                return null;
            }));
            assertEquals(REASON, e.reason());
            assertTrue(woken.get(), "deadlock reported while a platform thread could still wake a goroutine");
        }
    }

    /** Main waits on a timer's channel while collections run: the timer fires and main returns. */
    @Test
    void mainWaitingOnATimerIsNoDeadlock() throws Exception {
        try (GoRuntime rt = runtime()) {
            AtomicBoolean done = new AtomicBoolean();
            Thread gc = Thread.ofPlatform().start(() -> {
                while (!done.get()) {
                    System.gc();
                    GoTesting.pause(20);
                }
            });
            try {
                assertThat(rt.run(() -> Time.after(Duration.ofMillis(300)).recv())).isNotNull();
            } finally {
                done.set(true);
                gc.join();
            }
        }
    }

    /**
     * Main is fed in bursts by a platform thread, with quiet stretches of 300 ms or more between
     * them: the check's back-off goes on across stretches, so it asks for a handful of collections
     * in all (100 ms, then 200 ms of quiet; 400 ms needs a longer stretch), not one or two per
     * quiet stretch, which would be ten or more here.
     */
    @Test
    void quietStretchesBetweenBurstsCostAHandfulOfCollectionsInAll() throws Exception {
        try (GoRuntime rt = runtime()) {
            Chan<Integer> feed = Chan.make();
            Thread feeder = Thread.ofPlatform().start(() -> {
                for (int i = 1; i <= 10; i++) {
                    GoTesting.pause(300);
                    feed.send(i);
                }
            });
            int sum = rt.run(() -> {
                int s = 0;
                for (int i = 0; i < 10; i++) {
                    s += feed.recv();
                }
                return s;
            });
            feeder.join();
            assertEquals(55, sum);
            assertThat(rt.sched().checkdead.collectionsRequested()).as("explicit collections over 10 quiet stretches").isBetween(1, 5);
        }
    }

    /**
     * Main is asleep for ever, and a timer is pending (Go's checkdead: "there are timers" is no
     * deadlock yet): the deadlock is reported only after the timer fired.
     */
    @Test
    void pendingTimerDelaysTheDeadlock() {
        try (GoRuntime rt = runtime()) {
            AtomicBoolean fired = new AtomicBoolean();
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Time.afterFunc(Duration.ofMillis(500), () -> fired.set(true));
                recvOnFreshChannel();
                return null;
            }));
            assertEquals(REASON, e.reason());
            assertTrue(fired.get(), "deadlock reported while a timer was pending");
        }
    }

    /**
     * Main is asleep for ever while another goroutine spins with safe points and collections run:
     * no deadlock while it runs, one once it has exited.
     */
    @Test
    void spinningGoroutineDelaysTheDeadlock() {
        try (GoRuntime rt = runtime()) {
            AtomicBoolean spun = new AtomicBoolean();
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Go.go(() -> {
                    for (int gcs = 0; gcs < 15; gcs++) {
                        System.gc(); // main's goroutine is unreachable from the first one on
                        long until = System.nanoTime() + 20_000_000;
                        while (System.nanoTime() < until) {
                            Go.checkpoint();
                        }
                    }
                    spun.set(true);
                });
                recvOnFreshChannel();
                return null;
            }));
            assertEquals(REASON, e.reason());
            assertTrue(spun.get(), "deadlock reported while a goroutine was running");
        }
    }
}
