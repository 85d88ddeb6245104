package io.gosched.context;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Select;
import io.gosched.runtime.Selected;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** io.gosched.context: cancellation trees, deadlines, select on done(). */
@Timeout(60)
class ContextTest {

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    @Test
    void backgroundIsNeverDone() {
        Context bg = Context.background();
        assertNull(bg.err());
        assertThat(bg.deadline()).isEmpty();
        assertNull(bg.done().tryRecv());
        assertSame(bg, Context.background());
    }

    @Test
    void cancelPropagatesDownATreeButNotUp() throws Exception {
        CancelContext root = Context.withCancel(Context.background());
        CancelContext a = Context.withCancel(root);
        CancelContext b = Context.withCancel(root);
        List<CancelContext> grandchildren = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            grandchildren.add(Context.withCancel(i % 2 == 0 ? a : b));
        }
        a.cancel();
        assertSame(Context.CANCELED, a.err());
        assertNull(root.err(), "a child's cancel never reaches its parent");
        assertNull(b.err());
        for (int i = 0; i < 10; i++) {
            assertEquals(i % 2 == 0, grandchildren.get(i).err() != null, "grandchild " + i);
        }
        assertThat(((CancelCtx) root).childCount()).as("a cancelled child leaves its parent").isEqualTo(1);
        root.cancel();
        assertSame(Context.CANCELED, b.err());
        for (CancelContext g : grandchildren) {
            assertSame(Context.CANCELED, g.err());
            assertTrue(g.done().isClosed());
        }
        // A child of a cancelled parent is born cancelled.
        assertSame(Context.CANCELED, Context.withCancel(root).err());
        root.cancel(); // idempotent
    }

    /**
     * In a synctest bubble: the deadline fires exactly 20 ms (fake time) after it was set, with no
     * allowance for a busy machine (the real-clock version needed one).
     */
    @Test
    void deadlinesFireAndPropagate() {
        io.gosched.runtime.Bubble.runOnFreshRuntime(() -> {
            Instant t0 = io.gosched.time.Time.now();
            CancelContext parent = Context.withTimeout(Context.background(), Duration.ofMillis(20));
            CancelContext child = Context.withCancel(parent);
            CancelContext later = Context.withTimeout(parent, Duration.ofHours(1));
            assertEquals(parent.deadline(), later.deadline(), "a later deadline is capped by the parent's");
            assertEquals(java.util.Optional.of(t0.plusMillis(20)), parent.deadline());
            child.done().recv();
            // The parent cancels its children one after another, so `later` may still be on its
            // way when child's done is closed (CI: later.err() was null on the other P).
            later.done().recv();
            assertEquals(t0.plusMillis(20), io.gosched.time.Time.now(), "cancelled exactly at the deadline");
            assertSame(Context.DEADLINE_EXCEEDED, parent.err());
            assertSame(Context.DEADLINE_EXCEEDED, child.err());
            assertSame(Context.DEADLINE_EXCEEDED, later.err());
            CancelContext past = Context.withDeadline(Context.background(), io.gosched.time.Time.now().minusSeconds(1));
            assertSame(Context.DEADLINE_EXCEEDED, past.err());
            CancelContext cancelled = Context.withTimeout(Context.background(), Duration.ofMillis(50));
            cancelled.cancel();
            assertSame(Context.CANCELED, cancelled.err());
        }, io.gosched.runtime.SchedulerConfig.builder().gomaxprocs(2).build());
    }

    /** Workers select on their work channel and done(); cancelling the root stops them all. */
    @Test
    void selectOnDoneStopsAWorkerTree() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            CancelContext root = Context.withCancel(Context.background());
            Chan<Integer> work = Chan.make();
            AtomicInteger stopped = new AtomicInteger();
            AtomicInteger handled = new AtomicInteger();
            int workers = 100;
            CountDownLatch done = new CountDownLatch(workers);
            for (int i = 0; i < workers; i++) {
                Context mine = Context.withCancel(i % 2 == 0 ? root : Context.withCancel(root));
                rt.go(() -> {
                    for (;;) {
                        Selected s = Select.select(Select.recv(mine.done()), Select.recv(work));
                        if (s.index() == 0) {
                            stopped.incrementAndGet();
                            done.countDown();
                            return;
                        }
                        handled.incrementAndGet();
                    }
                });
            }
            rt.run(() -> {
                for (int i = 0; i < 1000; i++) {
                    work.send(i);
                }
                return null;
            });
            root.cancel();
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertEquals(workers, stopped.get());
            assertEquals(1000, handled.get());
        }
    }

    @Test
    void foreignParentContextsArePropagatedToo() throws Exception {
        CancelContext real = Context.withCancel(Context.background());
        Context foreign = new Context() {
            public Chan<?> done() { return real.done(); }
            public RuntimeException err() { return real.err(); }
            public java.util.Optional<Instant> deadline() { return java.util.Optional.empty(); }
            public Object value(Object key) { return null; } // carries no values: watched, not linked
        };
        CancelContext child = Context.withCancel(foreign);
        real.cancel();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (child.err() == null && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertSame(Context.CANCELED, child.err());
        Go.sleep(Duration.ZERO);
    }

    /**
     * Go's contract: Err is nil while Done is not closed. While goroutines poll done() with a
     * select-with-default (Go's idiom, which takes done's channel lock each time), a watcher
     * spins on err() and another thread cancels; whenever the watcher sees an error, done()
     * must already be closed (26-46 of 200 cancellations showed err() first before the fix).
     */
    @Test
    void errIsNullUntilDoneIsClosed() throws Exception {
        int rounds = 300 * Integer.getInteger("gosched.stress", 1);
        AtomicInteger early = new AtomicInteger();
        try (GoRuntime rt = runtime(2)) {
            for (int r = 0; r < rounds; r++) {
                CancelContext ctx = Context.withCancel(Context.background());
                CountDownLatch pollersDone = new CountDownLatch(2);
                for (int k = 0; k < 2; k++) {
                    rt.go(() -> {
                        while (Select.trySelect(Select.recv(ctx.done())).index() < 0) {
                            Go.checkpoint();
                        }
                        pollersDone.countDown();
                    });
                }
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                Thread watcher = Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                    while (ctx.err() == null) {
                        Thread.onSpinWait();
                    }
                    if (!ctx.done().isClosed()) {
                        early.incrementAndGet();
                    }
                });
                start.await();
                ctx.cancel();
                watcher.join(10_000);
                assertThat(watcher.isAlive()).isFalse();
                assertTrue(pollersDone.await(10, TimeUnit.SECONDS));
            }
        }
        assertThat(early.get()).as("cancellations where err() was set before done() was closed, of %d", rounds).isZero();
    }
}
