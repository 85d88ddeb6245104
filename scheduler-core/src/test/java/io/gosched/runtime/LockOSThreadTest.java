package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go.lockOSThread / unlockOSThread: Go's runtime/proc_test.go tests under Go's names, plus what
 * thread-affine Java code relies on (a ThreadLocal, a synchronized block held across a park).
 */
@Timeout(60)
class LockOSThreadTest {

    /** Go: TestLockOSThreadNesting — lock and unlock count, as Go's LockOSCounts reports. */
    @Test
    void TestLockOSThreadNesting() throws Exception {
        GoTesting.runGo(2, () -> {
            G gp = Scheduler.getg();
            assertEquals(0, gp.lockedExt, "want locked count 0");
            Go.lockOSThread();
            Go.lockOSThread();
            Go.unlockOSThread();
            assertEquals(1, gp.lockedExt, "want locked count 1");
            assertSame(gp.m, gp.lockedm, "still wired after one unlock of two locks");
            Go.unlockOSThread();
            assertEquals(0, gp.lockedExt, "want locked count 0");
            assertNull(gp.lockedm, "unwired at zero");
            Go.unlockOSThread(); // no lock held: a no-op, as in Go
            assertEquals(0, gp.lockedExt);
        });
    }

    /**
     * The nesting counters are shorts (a smaller G): one lock or pin past Short.MAX_VALUE is
     * refused with an error naming it, and leaves the count where it was, so every one taken can
     * still be undone.
     */
    @Test
    void nestingPastTheCountersLimitIsRefusedAndUndoable() throws Exception {
        GoTesting.runGo(1, () -> {
            G gp = Scheduler.getg();
            for (int i = 0; i < Short.MAX_VALUE; i++) {
                Go.lockOSThread();
            }
            IllegalStateException locked = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, Go::lockOSThread);
            assertThat(locked).hasMessageContaining("LockOSThread nesting overflow");
            assertEquals(Short.MAX_VALUE, gp.lockedExt);
            for (int i = 0; i < Short.MAX_VALUE; i++) {
                Go.unlockOSThread();
            }
            assertNull(gp.lockedm, "unwired after as many unlocks as locks");

            for (int i = 0; i < Short.MAX_VALUE; i++) {
                Go.procPin();
            }
            IllegalStateException pinned = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, Go::procPin);
            assertThat(pinned).hasMessageContaining("procPin nesting overflow");
            assertEquals(Short.MAX_VALUE, gp.locks);
            for (int i = 0; i < Short.MAX_VALUE; i++) {
                Go.procUnpin();
            }
            assertEquals(0, gp.locks);
            Chan<Integer> c = Chan.make();
            Go.go(() -> c.send(1));
            assertEquals(1, c.recv(), "every pin undone: the goroutine parks again"); // a pinned recv throws
        });
    }

    /**
     * While locked, a goroutine runs on one thread across every kind of switch (channel park,
     * sleep, select, Gosched, a preemption, a syscall), and that thread runs no other goroutine;
     * the others, meanwhile, keep running on other threads, even with a single P (the locked
     * M hands its P off while its goroutine waits).
     */
    @Test
    void lockedGoroutineKeepsItsThreadAndItsThreadRunsNoOtherGoroutine() throws Exception {
        for (int procs : new int[] {1, 2}) {
            GoTesting.runGo(procs, () -> {
                AtomicReference<Thread> lockedThread = new AtomicReference<>();
                AtomicBoolean done = new AtomicBoolean();
                AtomicBoolean active = new AtomicBoolean(); // between lockOSThread and unlockOSThread
                Set<Thread> othersSaw = ConcurrentHashMap.newKeySet();
                Set<Thread> lockedSaw = ConcurrentHashMap.newKeySet();
                Chan<Integer> ping = Chan.make();
                Chan<Integer> pong = Chan.make();
                WaitGroup wg = new WaitGroup();
                wg.add(1);
                Go.go(() -> {
                    Go.lockOSThread();
                    lockedThread.set(Thread.currentThread());
                    active.set(true);
                    for (int i = 0; i < 200; i++) {
                        lockedSaw.add(Thread.currentThread());
                        ping.send(i);
                        lockedSaw.add(Thread.currentThread());
                        pong.recv();
                        lockedSaw.add(Thread.currentThread());
                        if (i % 20 == 0) {
                            Go.sleep(Duration.ofMillis(1));
                            Go.yield();
                            Select.select(Select.recv(pong), Select.recv(io.gosched.time.Time.after(Duration.ofNanos(1))));
                            lockedSaw.add(Thread.currentThread());
                            try {
                                Go.syscall(() -> {
                                    Thread.sleep(1);
                                    return null;
                                });
                            } catch (Exception e) {
                                throw new AssertionError(e);
                            }
                            lockedSaw.add(Thread.currentThread());
                        }
                    }
                    active.set(false);
                    done.set(true);
                    Go.unlockOSThread();
                    wg.done();
                });
                // Other goroutines: a busy ponger and a few that churn, all recording their threads.
                Go.go(() -> {
                    while (!done.get()) {
                        record(active, othersSaw);
                        if (Select.select(Select.recv(ping), Select.recv(io.gosched.time.Time.after(Duration.ofMillis(1)))).index() == 0) {
                            record(active, othersSaw);
                            Select.select(Select.send(pong, 0), Select.recv(io.gosched.time.Time.after(Duration.ofMillis(50))));
                        }
                    }
                });
                for (int k = 0; k < 4; k++) {
                    Go.go(() -> {
                        while (!done.get()) {
                            record(active, othersSaw);
                            Go.yield();
                        }
                    });
                }
                wg.await();
                assertEquals(Set.of(lockedThread.get()), lockedSaw, "a locked goroutine always runs on its thread");
                assertFalse(othersSaw.contains(lockedThread.get()), "the locked thread ran another goroutine");
                assertThat(othersSaw).isNotEmpty();
            });
        }
    }

    /** Records the current thread if the locked goroutine was locked all along (no park between the reads). */
    private static void record(AtomicBoolean active, Set<Thread> seen) {
        if (active.get()) {
            Thread t = Thread.currentThread();
            if (active.get()) {
                seen.add(t);
            }
        }
    }

    /** A ThreadLocal set in a locked goroutine is there after every park, on the same thread. */
    @Test
    void threadLocalSurvivesParksWhileLocked() throws Exception {
        ThreadLocal<String> tl = new ThreadLocal<>();
        GoTesting.runGo(2, () -> {
            Chan<Integer> c = Chan.make();
            Go.go(() -> {
                for (int i = 0; i < 100; i++) {
                    c.send(i);
                    Go.sleep(Duration.ofNanos(1));
                }
            });
            Go.lockOSThread();
            try {
                tl.set("mine");
                for (int i = 0; i < 100; i++) {
                    assertEquals(i, c.recv());
                    assertEquals("mine", tl.get(), "ThreadLocal lost after park " + i);
                }
            } finally {
                tl.remove();
                Go.unlockOSThread();
            }
        });
    }

    /**
     * A synchronized block held across channel parks and a sleep stays on one thread while
     * locked, so code that pairs a monitor with its thread (a driver keeping per-thread state
     * under a lock, Thread.holdsLock checks) sees one thread throughout; a platform thread
     * contending for the monitor waits until the block ends. (JDK 25 lets an unlocked goroutine
     * keep a monitor across a park too, but it may resume on another thread.)
     */
    @Test
    void synchronizedHeldAcrossParksWhileLocked() throws Exception {
        Object monitor = new Object();
        GoTesting.runGo(2, () -> {
            Chan<Integer> c = Chan.make();
            Chan<Boolean> contenderDone = Chan.make(1);
            AtomicBoolean inside = new AtomicBoolean();
            Go.go(() -> {
                for (int i = 0; i < 50; i++) {
                    Go.sleep(Duration.ofNanos(1)); // so that the receiver parks
                    c.send(i);
                }
            });
            Go.lockOSThread();
            try {
                synchronized (monitor) {
                    Thread mine = Thread.currentThread();
                    inside.set(true);
                    Thread contender = Thread.ofPlatform().start(() -> {
                        synchronized (monitor) {
                            contenderDone.send(!inside.get());
                        }
                    });
                    for (int i = 0; i < 50; i++) {
                        assertEquals(i, c.recv());
                        assertSame(mine, Thread.currentThread(), "resumed on another thread inside synchronized");
                        assertTrue(Thread.holdsLock(monitor));
                    }
                    for (int i = 0; i < 20; i++) { // unlocked, about half of these sleeps resume elsewhere
                        Go.sleep(Duration.ofMillis(1));
                        assertSame(mine, Thread.currentThread(), "resumed on another thread inside synchronized");
                    }
                    assertTrue(Thread.holdsLock(monitor));
                    assertNull(contenderDone.tryRecv(), "the contender got the monitor while we held it");
                    inside.set(false);
                    assertThat(contender.isAlive()).isTrue();
                }
                assertTrue(contenderDone.recv(), "the contender saw us inside");
            } finally {
                Go.unlockOSThread();
            }
        });
    }

    /**
     * Go: TestLockOSThreadExit (testprog LockOSThreadMain/LockOSThreadAlt) — a goroutine that ends
     * locked ends its thread; one that unlocked first gives its thread back to the scheduler;
     * the runtime goes on running goroutines either way.
     */
    @Test
    void TestLockOSThreadExit() throws Exception {
        GoTesting.runGo(2, () -> {
            Chan<Thread> locked = Chan.make(1);
            Go.go(() -> {
                Go.lockOSThread();
                locked.send(Thread.currentThread());
            });
            Thread t = locked.recv();
            t.join(10_000);
            assertFalse(t.isAlive(), "the thread of a goroutine that ended locked must exit");

            Chan<Thread> unlocked = Chan.make(1);
            Go.go(() -> {
                Go.lockOSThread();
                Go.unlockOSThread();
                unlocked.send(Thread.currentThread());
            });
            Thread u = unlocked.recv();
            Go.sleep(Duration.ofMillis(50));
            assertTrue(u.isAlive(), "an unlocked goroutine's thread is reused, not ended");

            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 100; i++) {
                wg.add(1);
                Go.go(wg::done);
            }
            wg.await();
        });
    }

    /**
     * Go: TestLockOSThreadAvoidsStatePropagation — thread state a locked goroutine changed (Go:
     * unshare(CLONE_FS); here a ThreadLocal) does not leak to other goroutines, because its thread
     * ends with it instead of going back to the pool.
     */
    @Test
    void TestLockOSThreadAvoidsStatePropagation() throws Exception {
        ThreadLocal<String> state = new ThreadLocal<>();
        GoTesting.runGo(2, () -> {
            for (int round = 0; round < 20; round++) {
                Chan<Boolean> done = Chan.make(1);
                Go.go(() -> {
                    Go.lockOSThread();
                    state.set("tainted"); // exits without cleaning up, still locked
                    done.send(true);
                });
                done.recv();
                Set<String> seen = ConcurrentHashMap.newKeySet();
                WaitGroup wg = new WaitGroup();
                for (int i = 0; i < 50; i++) {
                    wg.add(1);
                    Go.go(() -> {
                        String s = state.get();
                        if (s != null) {
                            seen.add(s);
                        }
                        Go.yield();
                        s = state.get();
                        if (s != null) {
                            seen.add(s);
                        }
                        wg.done();
                    });
                }
                wg.await();
                assertThat(seen).as("a goroutine saw the state of an ended locked goroutine's thread").isEmpty();
            }
        });
    }

    /**
     * Go's traceback walks a locked goroutine's stack as any other's (only its header says
     * "locked to thread"): a dump must show where a waiting locked goroutine waits. Its frames
     * are on its M's thread, which sleeps inside them, not in an unmounted continuation.
     */
    @Test
    void aWaitingLockedGoroutineShowsItsStackInADump() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Long> ready = Chan.make(1);
            Chan<Boolean> release = Chan.make();
            rt.go(() -> lockedAndWaiting(ready, release));
            long id = ready.recv();
            GoTesting.await("the locked goroutine waits", () -> rt.goroutines().stream()
                    .anyMatch(g -> g.id() == id && g.is(GoroutineInfo.State.WAITING)));
            GoroutineInfo info = rt.goroutines().stream().filter(g -> g.id() == id).findFirst().orElseThrow();
            assertThat(info.stack()).as("the stack of a waiting locked goroutine")
                    .anyMatch(f -> f.getMethodName().equals("lockedAndWaiting"));
            assertThat(info.stack()).as("no frame of the M's own loop below the goroutine's body")
                    .noneMatch(f -> f.getClassName().equals(M.class.getName()) && f.getMethodName().equals("run"));
            assertThat(rt.dumpGoroutines()).contains("LockOSThreadTest.lockedAndWaiting(...)");
            release.send(true);
        }
    }

    private static void lockedAndWaiting(Chan<Long> ready, Chan<Boolean> release) {
        Go.lockOSThread();
        ready.send(Go.goid());
        release.recv();
        Go.unlockOSThread();
    }

    /** On a platform thread lockOSThread does nothing (the thread is already its own). */
    @Test
    void lockOSThreadOnAPlatformThreadIsANoOp() {
        Go.lockOSThread();
        Go.unlockOSThread();
        Go.unlockOSThread();
    }

    /** Closing the runtime while a locked goroutine waits ends its thread; nothing hangs. */
    @Test
    void closeWhileALockedGoroutineWaits() throws Exception {
        AtomicReference<Thread> t = new AtomicReference<>();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Boolean> ready = Chan.make(1);
            rt.go(() -> {
                Go.lockOSThread();
                t.set(Thread.currentThread());
                ready.send(true);
                Chan.<Boolean>make().recv(); // waits forever
            });
            ready.recv();
            assertFalse(rt.shutdown(Duration.ofMillis(100)), "a goroutine was still waiting");
        }
        t.get().join(10_000);
        assertFalse(t.get().isAlive());
    }
}
