package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SchedulerConfig.randomizeScheduling, Go's randomizeScheduler: off, one P runs the Gs a
 * goroutine creates in Go's runnext order; on, that order is not to be relied on, and nothing
 * is lost.
 */
@Timeout(120)
class RandomizeSchedulingTest {

    static final int CHILDREN = 12;
    static final int RUNS = 30;

    /**
     * main creates children 0..n-1 on one P and returns. Each new G takes runnext and kicks the
     * previous one to the ring's tail, so the P runs the last child first, then the others in
     * creation order: [n-1, 0, 1, ..., n-2].
     */
    static List<Integer> childOrder(boolean randomize, long seed, int runqSize) throws Exception {
        SchedulerConfig config = SchedulerConfig.builder().gomaxprocs(1).runqSize(runqSize)
                .randomizeScheduling(randomize).seed(seed).build();
        try (GoRuntime rt = GoRuntime.start(config)) {
            List<Integer> order = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(CHILDREN);
            rt.run(() -> {
                // Pinned: the order holds only for an unbroken loop, and on a loaded machine a
                // stall of the loop's thread past the quantum let sysmon preempt it midway (CI:
                // [9, 0..8, 11, 10]: children 0..9 ran before 10 and 11 were made).
                Go.procPin();
                try {
                    spawnChildren(order, done);
                } finally {
                    Go.procUnpin();
                }
                return null;
            });
            assertThat(done.await(30, TimeUnit.SECONDS)).as("every child ran").isTrue();
            synchronized (order) {
                return List.copyOf(order);
            }
        }
    }

    private static void spawnChildren(List<Integer> order, CountDownLatch done) {
        for (int i = 0; i < CHILDREN; i++) {
            int id = i;
            Go.go(() -> {
                synchronized (order) {
                    order.add(id);
                }
                done.countDown();
            });
        }
    }

    static List<Integer> runnextOrder() {
        List<Integer> expected = new ArrayList<>();
        expected.add(CHILDREN - 1);
        for (int i = 0; i < CHILDREN - 1; i++) {
            expected.add(i);
        }
        return expected;
    }

    @Test
    void offTheOrderIsGosRunnextOrderEveryTime() throws Exception {
        for (int run = 0; run < 5; run++) {
            assertThat(childOrder(false, run, 256)).isEqualTo(runnextOrder());
        }
    }

    @Test
    void onTheCreationOrderIsBrokenAndEveryChildStillRunsOnce() throws Exception {
        Set<List<Integer>> seen = new HashSet<>();
        for (int run = 0; run < RUNS; run++) {
            List<Integer> order = childOrder(true, run, 256);
            assertThat(order).containsExactlyInAnyOrderElementsOf(runnextOrder());
            seen.add(order);
        }
        // Each child skips runnext with probability 1/2: RUNS runs in Go's order, or all in one
        // order, would be chance at 2^-(11*RUNS) or so.
        assertThat(seen).as("orders seen").hasSizeGreaterThan(1);
    }

    @Test
    void onTheHalfThatSpillsToTheGlobalQueueIsShuffledAndNothingIsLost() throws Exception {
        // A ring of 4 fills after 5 children (4 + runnext): the rest spill, half a ring at a
        // time, through runqputslow's shuffled batch. Nothing may be lost or run twice whatever
        // the shuffle did.
        for (int run = 0; run < RUNS; run++) {
            assertThat(childOrder(true, run, 4)).containsExactlyInAnyOrderElementsOf(runnextOrder());
        }
    }
}
