package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The sudog queue every channel and semaphore waits in, against a list doing the same operations
 * in random order: the order, the links both ways, and the last end kept only while two or more
 * wait (see WaitQ: a single waiter stores one end, for G1's write barrier).
 */
class WaitQTest {

    /** A holder with the two ends, as Chan and Sema have them. */
    static final class Holder {
        Sudog first;
        Sudog last;
    }

    static final WaitQ<Holder> Q = new WaitQ<>() {
        @Override
        Sudog first(Holder h) {
            return h.first;
        }

        @Override
        void setFirst(Holder h, Sudog s) {
            h.first = s;
        }

        @Override
        Sudog last(Holder h) {
            return h.last;
        }

        @Override
        void setLast(Holder h, Sudog s) {
            h.last = s;
        }
    };

    @Test
    void randomOperationsKeepTheOrderOfAList() {
        SplittableRandom rnd = new SplittableRandom(20261203);
        for (int run = 0; run < 200; run++) {
            Holder h = new Holder();
            LinkedList<Sudog> model = new LinkedList<>();
            List<Sudog> removed = new ArrayList<>();
            for (int op = 0; op < 300; op++) {
                switch (rnd.nextInt(6)) {
                    case 0, 1 -> {
                        Sudog s = Sudog.acquireSudog();
                        Q.enqueue(h, s);
                        model.addLast(s);
                    }
                    case 2 -> {
                        Sudog s = Sudog.acquireSudog();
                        Q.enqueueFirst(h, s);
                        model.addFirst(s);
                    }
                    case 3 -> {
                        Sudog s = Q.dequeue(h);
                        assertThat(s).isSameAs(model.pollFirst());
                        if (s != null) {
                            removed.add(s);
                        }
                    }
                    case 4 -> {
                        if (!model.isEmpty()) {
                            Sudog s = model.remove(rnd.nextInt(model.size()));
                            assertThat(Q.dequeueSudoG(h, s)).as("a queued sudog is unlinked").isTrue();
                            removed.add(s);
                        }
                    }
                    default -> {
                        if (!removed.isEmpty()) {
                            Sudog s = removed.get(rnd.nextInt(removed.size()));
                            assertThat(Q.dequeueSudoG(h, s)).as("a sudog already removed").isFalse();
                        }
                    }
                }
                assertMatches(h, model);
            }
        }
    }

    @Test
    void oneWaiterStoresOnlyTheFirstEnd() {
        Holder h = new Holder();
        Sudog a = Sudog.acquireSudog();
        Sudog b = Sudog.acquireSudog();
        Q.enqueue(h, a);
        assertThat(h.first).isSameAs(a);
        assertThat(h.last).isNull();
        Q.enqueue(h, b);
        assertThat(h.last).isSameAs(b);
        assertThat(Q.dequeue(h)).isSameAs(a);
        assertThat(h.first).isSameAs(b);
        assertThat(h.last).as("one left: no last end, nothing retained").isNull();
        assertThat(Q.dequeue(h)).isSameAs(b);
        assertThat(h.first).isNull();
        assertThat(Q.dequeue(h)).isNull();
    }

    private static void assertMatches(Holder h, List<Sudog> model) {
        List<Sudog> got = new ArrayList<>();
        Sudog prev = null;
        for (Sudog s = h.first; s != null; s = s.next) {
            assertThat(s.prev).as("prev link of element %d", got.size()).isSameAs(prev);
            got.add(s);
            prev = s;
            assertThat(got.size()).as("a cycle").isLessThanOrEqualTo(model.size());
        }
        assertThat(got).containsExactlyElementsOf(model);
        assertThat(Q.size(h)).isEqualTo(model.size());
        assertThat(Q.isEmpty(h)).isEqualTo(model.isEmpty());
        assertThat(h.last).as("the last end with %d queued", model.size())
                .isSameAs(model.size() >= 2 ? model.get(model.size() - 1) : null);
    }
}
