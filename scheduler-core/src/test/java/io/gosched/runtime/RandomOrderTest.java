package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Go: TestStealOrder (proc_runtime_test.go RunStealOrderTest). */
class RandomOrderTest {

    @Test
    void everyStartVisitsEveryPExactlyOnce() {
        for (int n = 1; n <= 64; n++) {
            RandomOrder ord = new RandomOrder(n);
            if (n >= 3) {
                assertThat(ord.coprimeCount()).as("coprimes of %d", n).isGreaterThanOrEqualTo(2);
            }
            for (int start = 0; start < ord.coprimeCount() * n + 5; start++) {
                boolean[] seen = new boolean[n];
                int visits = 0;
                long c = ord.start(start);
                for (; !RandomOrder.done(c, n); c = RandomOrder.next(c, n)) {
                    int pos = RandomOrder.position(c);
                    assertTrue(!seen[pos], "n=" + n + " start=" + start + " visits P" + pos + " twice");
                    seen[pos] = true;
                    visits++;
                }
                assertEquals(n, visits, "n=" + n + " start=" + start);
            }
        }
    }

    @Test
    void firstStartValuesGiveDistinctPositionAndStride() {
        for (int n = 2; n <= 64; n++) {
            RandomOrder ord = new RandomOrder(n);
            Set<Long> pairs = new HashSet<>();
            for (int start = 0; start < n * ord.coprimeCount(); start++) {
                long c = ord.start(start);
                pairs.add(((long) RandomOrder.position(c) << 32) | RandomOrder.stride(c));
            }
            assertEquals(n * ord.coprimeCount(), pairs.size(), "distinct (pos, inc) pairs for n=" + n);
        }
    }

    @Test
    void cursorPackingRoundTrips() {
        RandomOrder ord = new RandomOrder(1000);
        long c = ord.start(123_456);
        int pos = RandomOrder.position(c);
        int inc = RandomOrder.stride(c);
        long next = RandomOrder.next(c, 1000);
        assertEquals((pos + inc) % 1000, RandomOrder.position(next));
        assertEquals(inc, RandomOrder.stride(next));
        assertEquals(1, RandomOrder.steps(next));
    }
}
