package io.gosched.sync;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.GoTesting.Mode;
import io.gosched.runtime.SchedulerConfig;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/waitgroup_test.go plus the packed-state round trip. */
class WaitGroupTest {

    @Test
    void stateRoundTrip() {
        int[] counters = {0, 1, -1, 7, Integer.MAX_VALUE, Integer.MIN_VALUE, 123456};
        int[] waiters = {0, 1, 2, Integer.MAX_VALUE /* 31 bits: bit 31 is the bubble flag */, 65536};
        for (int c : counters) {
            for (int w : waiters) {
                long s = WaitGroup.pack(c, w);
                assertThat(WaitGroup.counter(s)).as("counter of pack(%d, %d)", c, w).isEqualTo(c);
                assertThat(WaitGroup.waiters(s)).as("waiters of pack(%d, %d)", c, w).isEqualTo(w);
                long flagged = s | WaitGroup.BUBBLE_FLAG;
                assertThat(WaitGroup.counter(flagged)).as("counter of flagged pack(%d, %d)", c, w).isEqualTo(c);
                assertThat(WaitGroup.waiters(flagged)).as("waiters of flagged pack(%d, %d)", c, w).isEqualTo(w);
            }
        }
        // Adding delta << 32 changes only the counter; +1 only the waiters.
        long s = WaitGroup.pack(3, 5);
        assertThat(WaitGroup.counter(s + (-1L << WaitGroup.COUNTER_SHIFT))).isEqualTo(2);
        assertThat(WaitGroup.waiters(s + 1)).isEqualTo(6);
    }

    /** Go: TestWaitGroup. Two groups of n=16 release each other in lockstep. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testWaitGroup(Mode mode) throws Exception {
        mode.run(4, () -> {
            for (int round = 0; round < 8 * STRESS; round++) {
                WaitGroup wg1 = new WaitGroup();
                WaitGroup wg2 = new WaitGroup();
                int n = 16;
                wg1.add(n);
                wg2.add(n);
                Chan<Boolean> exited = Chan.make(n);
                for (int i = 0; i < n; i++) {
                    spawn(() -> {
                        wg1.done();
                        wg2.await();
                        exited.send(true);
                    });
                }
                wg1.await();
                for (int i = 0; i < n; i++) {
                    assertThat(exited.tryRecv()).as("WaitGroup released group too soon (%s)", mode).isNull();
                    wg2.done();
                }
                for (int i = 0; i < n; i++) {
                    exited.recv(); // Will block if barrier fails to unlock someone.
                }
            }
        });
    }

    /** Go: TestWaitGroupMisuse. */
    @Test
    void testWaitGroupMisuse() {
        WaitGroup wg = new WaitGroup();
        wg.add(1);
        wg.done();
        assertThatThrownBy(wg::done).isInstanceOf(IllegalStateException.class).hasMessage("sync: negative WaitGroup counter");
        assertThat(wg.count()).as("the group is left as it was").isZero();
        wg.await(); // counter 0: returns at once
    }

    /** Many goroutines done() while platform threads and goroutines await. */
    @Test
    void waitersOnThreadsAndGoroutines() throws Exception {
        int n = 200 * STRESS;
        WaitGroup wg = new WaitGroup();
        wg.add(n);
        AtomicInteger released = new AtomicInteger();
        Thread t = Thread.ofPlatform().start(() -> {
            wg.await();
            released.incrementAndGet();
        });
        GoTesting.runGo(4, () -> {
            Chan<Boolean> waiterDone = Chan.make(3);
            for (int i = 0; i < 3; i++) {
                Go.go(() -> {
                    wg.await();
                    released.incrementAndGet();
                    waiterDone.send(true);
                });
            }
            for (int i = 0; i < n; i++) {
                Go.go(wg::done);
            }
            for (int i = 0; i < 3; i++) {
                waiterDone.recv();
            }
        });
        t.join(10_000);
        assertThat(released.get()).isEqualTo(4);
    }

    /**
     * Go 1.25's WaitGroup.Go is {@code defer wg.Done(); f()}: the group is done even when f
     * panics. Where the runtime goes on after an uncaught exception (a handler, or
     * PanicPolicy.LOG), await() must return, and the handler still sees each exception. Half the
     * goroutines throw, on 2 Ps, repeated. (Under the default CRASH the runtime stops first:
     * PanicTest.waitGroupGoReraisesTheException.)
     */
    @Test
    void waitGroupGoIsDoneWhenFThrowsAndTheRuntimeGoesOn() throws Exception {
        ConcurrentLinkedQueue<Throwable> uncaught = new ConcurrentLinkedQueue<>();
        int rounds = 100 * STRESS;
        int perRound = 8;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder()
                .gomaxprocs(2).randomizeScheduling(true).onUncaughtException((thread, t) -> uncaught.add(t)).build())) {
            rt.run(() -> {
                for (int round = 0; round < rounds; round++) {
                    WaitGroup wg = new WaitGroup();
                    AtomicInteger ran = new AtomicInteger();
                    for (int i = 0; i < perRound; i++) {
                        boolean fail = i % 2 == 0;
                        wg.go(() -> {
                            ran.incrementAndGet();
                            if (fail) {
                                throw new IllegalStateException("f failed");
                            }
                        });
                    }
                    wg.await();
                    assertThat(ran.get()).isEqualTo(perRound);
                    assertThat(wg.count()).isZero();
                }
                return null;
            });
            GoTesting.await("the handler saw every exception", () -> uncaught.size() == rounds * perRound / 2);
        }
        assertThat(uncaught).allMatch(t -> t instanceof IllegalStateException && "f failed".equals(t.getMessage()));
    }

    /** Go 1.25 WaitGroup.Go: add, run, done. */
    @Test
    void goRunsAndCounts() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        GoTesting.runGo(2, () -> {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 50; i++) {
                wg.go(ran::incrementAndGet);
            }
            wg.await();
            assertThat(ran.get()).isEqualTo(50);
        });
    }
}
