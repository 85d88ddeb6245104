package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Sequential and multi-threaded tests of the local run queue. Lincheck lives in RunQueueLincheckTest. */
class RunQueueTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    static G[] gs(int n) {
        G[] g = new G[n];
        for (int i = 0; i < n; i++) {
            g[i] = new G(null);
            g[i].goid = i;
        }
        return g;
    }

    /** Go: TestSchedLocalQueue — every length 0..256, FIFO, then empty; repeated so indices wrap. */
    @Test
    void schedLocalQueueEveryLengthAndWrapAround() {
        RunQueue q = new RunQueue(256);
        G[] g = gs(256);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i <= 256; i++) {
                assertTrue(q.isEmpty(), "not empty before length " + i);
                for (int j = 0; j < i; j++) {
                    assertTrue(q.putTail(g[j]), "put " + j + " of " + i);
                }
                assertEquals(i, q.size());
                for (int j = 0; j < i; j++) {
                    assertSame(g[j], q.getRing(), "FIFO at " + j + " of " + i);
                }
                assertNull(q.getRing());
                assertTrue(q.isEmpty());
            }
        }
    }

    @Test
    void indicesWrapAroundIntegerOverflow() {
        RunQueue q = new RunQueue(4);
        G[] g = gs(3);
        // 2^32 / 3 rounds would take long; instead step the free-running indices past overflow.
        for (long i = 0; i < 5_000; i++) {
            assertTrue(q.putTail(g[(int) (i % 3)]));
            assertSame(g[(int) (i % 3)], q.getRing());
        }
        q.head = Integer.MAX_VALUE - 1;
        q.tail = Integer.MAX_VALUE - 1;
        for (int i = 0; i < 10; i++) {
            assertTrue(q.putTail(g[0]));
            assertTrue(q.putTail(g[1]));
            assertEquals(2, q.size());
            assertSame(g[0], q.getRing());
            assertSame(g[1], q.getRing());
            assertTrue(q.isEmpty());
        }
    }

    @Test
    void fullRingRefusesAndOverflowTakesExactlyHalf() {
        RunQueue q = new RunQueue(8);
        G[] g = gs(9);
        for (int i = 0; i < 8; i++) {
            assertTrue(q.putTail(g[i]));
        }
        assertThat(q.putTail(g[8])).isFalse();
        G[] batch = new G[5];
        assertEquals(4, q.grabHalfForOverflow(batch));
        for (int i = 0; i < 4; i++) {
            assertSame(g[i], batch[i], "overflow takes the oldest half in order");
        }
        assertTrue(q.putTail(g[8]));
        for (int i = 4; i <= 8; i++) {
            assertSame(g[i], q.getRing());
        }
        // Not full: nothing is taken.
        assertTrue(q.putTail(g[0]));
        assertEquals(0, q.grabHalfForOverflow(batch));
    }

    @Test
    void runnextIsTakenFirstAndKicksTheOldOneToTheCaller() {
        RunQueue q = new RunQueue(4);
        G[] g = gs(3);
        assertNull(q.putNext(g[0]));
        assertSame(g[0], q.putNext(g[1]), "the old runnext is returned to be put at the tail");
        assertTrue(q.putTail(g[0]));
        assertThat(q.isEmpty()).isFalse();
        assertEquals(2, q.size());
        assertSame(g[1], q.getNext());
        assertNull(q.getNext());
        assertSame(g[0], q.getRing());
        assertTrue(q.isEmpty());
    }

    /** Go: TestSchedLocalQueueSteal — the thief gets i/2 or i/2+1 (ceil half), every G exactly once. */
    @Test
    void schedLocalQueueSteal() {
        RunQueue p1 = new RunQueue(256);
        RunQueue p2 = new RunQueue(256);
        G[] g = gs(256);
        for (int i = 0; i < 256; i++) {
            for (int j = 0; j < i; j++) {
                assertTrue(p1.putTail(g[j]));
            }
            int[] seen = new int[256];
            int stolen = 0;
            RunQueue.Stolen r = p2.steal(p1, true, false);
            G gp = r.gp();
            if (gp != null) {
                seen[(int) gp.goid]++;
                stolen++;
            }
            for (G x; (x = p2.getRing()) != null; ) {
                seen[(int) x.goid]++;
                stolen++;
            }
            assertEquals(stolen, r.count(), "the count steal reports, with " + i + " queued");
            for (G x; (x = p1.getRing()) != null; ) {
                seen[(int) x.goid]++;
            }
            for (int j = 0; j < i; j++) {
                assertEquals(1, seen[j], "G " + j + " seen " + seen[j] + " times with " + i + " queued");
            }
            assertThat(stolen).as("stolen of %d", i).isIn(i / 2, i / 2 + 1);
        }
    }

    @Test
    void runnextIsStolenOnlyWhenAskedAndOnlyWhenTheRingIsEmpty() {
        RunQueue victim = new RunQueue(4);
        RunQueue thief = new RunQueue(4);
        G[] g = gs(2);
        victim.putNext(g[0]);
        assertSame(RunQueue.Stolen.NOTHING, thief.steal(victim, false, false));
        assertSame(g[0], thief.steal(victim, true, false).gp());
        victim.putNext(g[0]);
        victim.putTail(g[1]);
        assertSame(g[1], thief.steal(victim, true, false).gp(), "the ring goes first");
        assertSame(g[0], victim.getNext());
    }

    @ParameterizedTest(name = "capacity {0}")
    @ValueSource(ints = {4, 256})
    void drainReturnsRunnextFirstThenTheRingInOrder(int capacity) {
        RunQueue q = new RunQueue(capacity);
        G[] g = gs(4);
        q.putTail(g[1]);
        q.putTail(g[2]);
        q.putNext(g[0]);
        G[] out = new G[capacity + 1];
        assertEquals(3, q.drain(out));
        assertSame(g[0], out[0]);
        assertSame(g[1], out[1]);
        assertSame(g[2], out[2]);
        assertTrue(q.isEmpty());
    }

    /**
     * Go: TestSchedLocalQueueEmpty — while the owner keeps one G in the queue at all times
     * (moving it between runnext and the ring), a concurrent isEmpty never reports empty.
     */
    @Test
    void schedLocalQueueEmptyNeverSpurious() throws Exception {
        RunQueue q = new RunQueue(4);
        G[] g = gs(2);
        int iters = 100_000 * STRESS;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger spurious = new AtomicInteger();
        q.putTail(g[0]);
        Thread observer = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                if (q.isEmpty()) {
                    spurious.incrementAndGet();
                }
            }
        });
        for (int i = 0; i < iters; i++) {
            // Invariant for the observer: at least one G is in the queue at every instant.
            if ((i & 1) == 0) {
                q.putNext(g[1]);
                assertSame(g[0], q.getRing());
                q.putTail(g[0]);
                assertSame(g[1], q.getNext());
            } else {
                q.putTail(g[1]);
                assertSame(g[0], q.getRing());
                q.putNext(g[0]);
                assertSame(g[1], q.getRing());
                q.putTail(g[1]);
                assertSame(g[0], q.getNext());
                q.putTail(g[0]);
                assertSame(g[1], q.getRing());
            }
        }
        stop.set(true);
        observer.join();
        assertEquals(0, spurious.get(), "isEmpty reported an empty queue that never was");
    }

    /** Owner puts and gets while thieves steal: every G is taken exactly once. */
    @ParameterizedTest(name = "capacity {0}")
    @ValueSource(ints = {4, 256})
    void ownerAgainstThievesNoGLostOrDuplicated(int capacity) throws Exception {
        int n = 200_000 * STRESS;
        int thieves = 3;
        RunQueue owner = new RunQueue(capacity);
        G[] g = gs(n);
        AtomicIntegerArray taken = new AtomicIntegerArray(n);
        AtomicInteger total = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < thieves; t++) {
            ts.add(Thread.ofPlatform().start(() -> {
                RunQueue mine = new RunQueue(capacity);
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                while (!done.get() || !owner.isEmpty()) {
                    G gp = mine.steal(owner, true, true).gp();
                    if (gp == null) {
                        continue;
                    }
                    take(taken, total, gp);
                    for (G x; (x = mine.getRing()) != null; ) {
                        take(taken, total, x);
                    }
                }
            }));
        }
        start.countDown();
        for (int i = 0; i < n; i++) {
            boolean next = (i % 3) == 0;
            G gp = g[i];
            if (next) {
                gp = owner.putNext(gp);
            }
            while (gp != null && !owner.putTail(gp)) {
                G x = owner.getRing();
                if (x != null) {
                    take(taken, total, x);
                }
            }
            if ((i % 5) == 0) {
                G x = owner.getNext();
                if (x == null) {
                    x = owner.getRing();
                }
                if (x != null) {
                    take(taken, total, x);
                }
            }
        }
        done.set(true);
        for (G x; (x = owner.getNext()) != null || (x = owner.getRing()) != null; ) {
            take(taken, total, x);
        }
        for (Thread t : ts) {
            t.join();
        }
        Set<Integer> missing = new HashSet<>();
        for (int i = 0; i < n; i++) {
            if (taken.get(i) != 1) {
                missing.add(i);
            }
        }
        assertThat(missing).as("Gs taken != once (capacity %d)", capacity).isEmpty();
        assertEquals(n, total.get());
    }

    private static void take(AtomicIntegerArray taken, AtomicInteger total, G gp) {
        int prev = taken.getAndIncrement((int) gp.goid);
        if (prev != 0) {
            throw new AssertionError("G " + gp.goid + " taken twice");
        }
        total.incrementAndGet();
    }
}
