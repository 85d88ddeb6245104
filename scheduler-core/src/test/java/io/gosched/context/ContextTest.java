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

    @Test
    void deadlinesFireAndPropagate() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            rt.run(() -> {
                // Timed from before the deadline is set: the set-up below (first use of classes, on
                // a busy machine) may take longer than the 5 ms slack of the assertion.
                long t0 = System.nanoTime();
                CancelContext parent = Context.withTimeout(Context.background(), Duration.ofMillis(20));
                CancelContext child = Context.withCancel(parent);
                CancelContext later = Context.withTimeout(parent, Duration.ofHours(1));
                assertEquals(parent.deadline(), later.deadline(), "a later deadline is capped by the parent's");
                child.done().recv();
                assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(15_000_000);
                assertSame(Context.DEADLINE_EXCEEDED, parent.err());
                assertSame(Context.DEADLINE_EXCEEDED, child.err());
                assertSame(Context.DEADLINE_EXCEEDED, later.err());
                CancelContext past = Context.withDeadline(Context.background(), Instant.now().minusSeconds(1));
                assertSame(Context.DEADLINE_EXCEEDED, past.err());
                CancelContext cancelled = Context.withTimeout(Context.background(), Duration.ofMillis(50));
                cancelled.cancel();
                assertSame(Context.CANCELED, cancelled.err());
                return null;
            });
        }
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
}
