package io.gosched.sync;

import static io.gosched.runtime.GoTesting.STRESS;
import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.SchedulerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Pool reuse, the victim cache, and the poolDequeue underneath (ports of sync/pool_test.go). */
class PoolTest {

    @Test
    void reuseOnAPlatformThread() {
        AtomicInteger made = new AtomicInteger();
        Pool<Object> p = new Pool<>(() -> {
            made.incrementAndGet();
            return new Object();
        });
        Object a = p.get();
        assertThat(made.get()).isEqualTo(1);
        p.put(a);
        assertThat(p.get()).as("put then get reuses").isSameAs(a);
        assertThat(p.get()).as("empty pool falls back to the factory").isNotSameAs(a);
        assertThat(made.get()).isEqualTo(2);
        p.put(null); // ignored
        Pool<Object> noFactory = new Pool<>(null);
        assertThat(noFactory.get()).isNull();
    }

    @Test
    void reuseInAGoroutineThroughThePerPSlots() throws Exception {
        GoTesting.runGo(1, () -> {
            Pool<Object> p = new Pool<>(Object::new);
            Object a = new Object();
            Object b = new Object();
            Object c = new Object();
            p.put(a); // private
            p.put(b); // shared head
            p.put(c); // shared head
            // One P: private first, then the shared ring from the head (LIFO).
            assertThat(p.get()).isSameAs(a);
            assertThat(p.get()).isSameAs(c);
            assertThat(p.get()).isSameAs(b);
        });
    }

    /** Go: TestPoolGC/TestPoolRelease intent: an object survives one cleanup (victim) but not two. */
    @Test
    void victimCacheKeepsObjectsForOneCleanupOnly() throws Exception {
        Pool<Object> p = new Pool<>(Object::new);
        Object a = new Object();
        p.put(a);
        Pool.poolCleanup();
        assertThat(p.get()).as("found in the victim cache after one cleanup").isSameAs(a);
        p.put(a);
        Pool.poolCleanup();
        Pool.poolCleanup();
        assertThat(p.get()).as("dropped after two cleanups").isNotSameAs(a);

        GoTesting.runGo(1, () -> { // one P: the private slot read back is the one written
            Pool<Object> q = new Pool<>(Object::new);
            Object x = new Object();
            Object y = new Object();
            q.put(x);
            q.put(y);
            Pool.poolCleanup();
            List<Object> got = List.of(q.get(), q.get());
            assertThat(got).as("both found in the victim cache").containsExactlyInAnyOrder(x, y);
        });
    }

    /** Go: TestPoolStress. Workers put and get their own zero values; never see anything else. */
    @Test
    void testPoolStress() throws Exception {
        int workers = 10;
        int n = 10_000 * STRESS;
        AtomicInteger foreign = new AtomicInteger();
        GoTesting.runGo(4, () -> {
            Pool<Integer> p = new Pool<>(null);
            Chan<Boolean> done = Chan.make(workers);
            for (int i = 0; i < workers; i++) {
                Go.go(() -> {
                    Integer v = 0;
                    for (int j = 0; j < n; j++) {
                        if (v == null) {
                            v = 0;
                        }
                        p.put(v);
                        v = p.get();
                        if (v != null && v != 0) {
                            foreign.incrementAndGet();
                        }
                        if (j % 1000 == 0) {
                            Go.yield();
                        }
                    }
                    done.send(true);
                });
            }
            for (int i = 0; i < workers; i++) {
                done.recv();
            }
        });
        assertThat(foreign.get()).isZero();
    }

    // ---- poolDequeue ---------------------------------------------------------------------------

    /**
     * A Pool shared by two runtimes, one P each: both Ps are numbered 0, yet their goroutines
     * must not share per-P state. Each object says when it is out; a get that finds it out
     * already is an object handed out twice (1-5 a second before the slots were keyed per
     * runtime).
     */
    @Test
    void poolSharedByTwoRuntimesNeverHandsAnObjectOutTwice() throws Exception {
        final class Item {
            final AtomicBoolean out = new AtomicBoolean();
        }
        Pool<Item> p = new Pool<>(Item::new);
        AtomicInteger twice = new AtomicInteger();
        AtomicLong gets = new AtomicLong();
        long runNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1500L * STRESS);
        try (GoRuntime a = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
                GoRuntime b = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(2);
            for (GoRuntime rt : List.of(a, b)) {
                rt.go(() -> {
                    long end = System.nanoTime() + runNanos;
                    while (System.nanoTime() < end) {
                        for (int i = 0; i < 1000; i++) {
                            Item x = p.get();
                            Item y = p.get();
                            if (!x.out.compareAndSet(false, true)) {
                                twice.incrementAndGet();
                            }
                            if (!y.out.compareAndSet(false, true)) {
                                twice.incrementAndGet();
                            }
                            gets.addAndGet(2);
                            x.out.set(false);
                            y.out.set(false);
                            p.put(x);
                            p.put(y);
                        }
                    }
                    done.countDown();
                });
            }
            assertThat(done.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        assertThat(twice.get()).as("objects handed out twice in %d gets", gets.get()).isZero();
    }

    /** The private slot of P0 of one runtime is not the private slot of P0 of another. */
    @Test
    void perPSlotsOfTwoRuntimesAreApart() throws Exception {
        putInOneRuntimeGetInTwo(false);
    }

    /**
     * A cleanup between one runtime's put and its get keeps the object in the victim cache, and
     * another runtime's miss there must not drop it (it marked the whole victim cache empty:
     * perPSlotsOfTwoRuntimesAreApart failed once in CI when the cleanup thread ran between its
     * put and its gets).
     */
    @Test
    void aMissInOneRuntimeLeavesAnotherRuntimesVictims() throws Exception {
        putInOneRuntimeGetInTwo(true);
    }

    /** Runtime a puts an object on its P0; runtime b must not get it, and then a must. */
    private static void putInOneRuntimeGetInTwo(boolean cleanupBetween) throws Exception {
        Pool<Object> p = new Pool<>(null);
        Object mine = new Object();
        try (GoRuntime a = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
                GoRuntime b = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            a.run(() -> {
                p.put(mine);
                return null;
            });
            if (cleanupBetween) {
                Pool.poolCleanup(); // a's P0-private object is a victim now
            }
            assertThat(b.run(p::get)).as("runtime b's P0 took runtime a's P0-private object").isNull();
            assertThat(a.run(p::get)).as("runtime a gets its own object back").isSameAs(mine);
        }
    }

    @Test
    void headTailRoundTrip() {
        int[] vals = {0, 1, 2, 127, 128, Integer.MAX_VALUE, Integer.MIN_VALUE, -1};
        for (int h : vals) {
            for (int t : vals) {
                long ptrs = Pool.PoolDequeue.pack(h, t);
                assertThat(Pool.PoolDequeue.head(ptrs)).as("head of pack(%d, %d)", h, t).isEqualTo(h);
                assertThat(Pool.PoolDequeue.tail(ptrs)).as("tail of pack(%d, %d)", h, t).isEqualTo(t);
            }
        }
    }

    /** Sequential: every length 0..size, with the indices wrapped around many times. */
    @Test
    void dequeueSequentialEveryLengthAndWrapAround() {
        int size = 4;
        Pool.PoolDequeue d = new Pool.PoolDequeue(size);
        int next = 0;
        for (int round = 0; round < 50; round++) {
            for (int len = 0; len <= size; len++) {
                for (int i = 0; i < len; i++) {
                    assertThat(d.pushHead(next + i)).as("push %d of %d", i, len).isTrue();
                }
                if (len == size) {
                    assertThat(d.pushHead(-1)).as("push to full ring").isFalse();
                }
                // Pop half from the tail (FIFO), the rest from the head (LIFO).
                int fromTail = len / 2;
                for (int i = 0; i < fromTail; i++) {
                    assertThat(d.popTail()).as("popTail len=%d", len).isEqualTo(next + i);
                }
                for (int i = len - 1; i >= fromTail; i--) {
                    assertThat(d.popHead()).as("popHead len=%d", len).isEqualTo(next + i);
                }
                assertThat(d.popHead()).isNull();
                assertThat(d.popTail()).isNull();
                next += len;
            }
        }
    }

    /** Go: TestPoolDequeue. One producer (pushHead, popHead every 10th), many tail consumers: each value popped once. */
    @Test
    void testPoolDequeue() throws Exception {
        int n = 50_000 * STRESS;
        Pool.PoolDequeue d = new Pool.PoolDequeue(16);
        ConcurrentHashMap<Integer, Boolean> have = new ConcurrentHashMap<>();
        AtomicInteger dup = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger popped = new AtomicInteger();
        List<Thread> consumers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            consumers.add(Thread.ofPlatform().start(() -> {
                while (!stop.get() || popped.get() < n) {
                    Object v = d.popTail();
                    if (v == null) {
                        if (stop.get() && popped.get() >= n) {
                            return;
                        }
                        Thread.onSpinWait();
                        continue;
                    }
                    if (have.putIfAbsent((Integer) v, true) != null) {
                        dup.incrementAndGet();
                    }
                    popped.incrementAndGet();
                }
            }));
        }
        for (int j = 0; j < n; j++) {
            while (!d.pushHead(j)) {
                Thread.onSpinWait(); // full: wait for consumers
            }
            if (j % 10 == 0) {
                Object v = d.popHead();
                if (v != null) {
                    if (have.putIfAbsent((Integer) v, true) != null) {
                        dup.incrementAndGet();
                    }
                    popped.incrementAndGet();
                }
            }
        }
        stop.set(true);
        for (Thread t : consumers) {
            t.join(30_000);
        }
        assertThat(dup.get()).as("values popped twice").isZero();
        assertThat(have).as("every value popped").hasSize(n);
    }
}
