package io.gosched.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The global run queue against a model deque, over enough operations that its ends are replaced
 * many times (see GlobalRunQueue.Ends): every put, head put, batch put and take must keep the
 * order and the count whatever operation a replacement falls on.
 */
class GlobalRunQueueTest {

    @Test
    void randomOperationsKeepFifoOrderAcrossEndReplacements() {
        RuntimeLock lock = new RuntimeLock();
        GlobalRunQueue q = new GlobalRunQueue(lock);
        ArrayDeque<G> model = new ArrayDeque<>();
        SplittableRandom rnd = new SplittableRandom(20261204);
        long goid = 0;
        lock.lock();
        try {
            for (int op = 0; op < 200_000; op++) {
                // Takes slightly outnumber puts, so the queue keeps passing through empty (the
                // ends both null) as well as holding a few hundred Gs.
                int kind = rnd.nextInt(10);
                if (kind < 3) {
                    G gp = g(goid++);
                    q.put(gp);
                    model.addLast(gp);
                } else if (kind < 4) {
                    G gp = g(goid++);
                    q.putHead(gp);
                    model.addFirst(gp);
                } else if (kind < 5) {
                    int n = 1 + rnd.nextInt(4);
                    G first = g(goid++), last = first;
                    model.addLast(first);
                    for (int i = 1; i < n; i++) {
                        G next = g(goid++);
                        last.schedlink = next;
                        last = next;
                        model.addLast(next);
                    }
                    q.putBatch(first, last, n);
                } else {
                    G want = model.pollFirst();
                    G got = q.get();
                    assertSame(want, got, "take at operation " + op);
                    if (got != null) {
                        assertNull(got.schedlink, "a taken G still links into the queue");
                    }
                }
                assertEquals(model.size(), q.size(), "size after operation " + op);
            }
            for (G want; (want = model.pollFirst()) != null; ) {
                assertSame(want, q.get(), "draining");
            }
            assertNull(q.get(), "drained queue");
            assertEquals(0, q.size());
        } finally {
            lock.unlock();
        }
    }

    private static G g(long goid) {
        G gp = new G(null);
        gp.goid = goid;
        return gp;
    }
}
