package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Per-P timer heaps, Go.sleep and runtime timers. */
@Timeout(120)
class TimersTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    // ---- the heap itself ------------------------------------------------------------------------

    @Test
    void heapKeepsFourAryOrderThroughRandomAddsRemovesAndFixes() {
        TimerHeap h = new TimerHeap(null, null);
        Random rnd = new Random(42);
        List<RuntimeTimer> live = new ArrayList<>();
        RuntimeTimer.Func nop = (a, w, d) -> { };
        synchronized (h) {
            for (int step = 0; step < 20_000; step++) {
                int op = rnd.nextInt(3);
                if (op == 0 || live.isEmpty()) {
                    RuntimeTimer t = new RuntimeTimer(nop, null);
                    synchronized (t) {
                        t.when = 1 + rnd.nextInt(1000);
                        h.add(t);
                    }
                    live.add(t);
                } else if (op == 1) {
                    RuntimeTimer t = live.remove(rnd.nextInt(live.size()));
                    synchronized (t) {
                        h.removeAt(t.idx);
                    }
                    assertThat(t.ts).isNull();
                } else {
                    RuntimeTimer t = live.get(rnd.nextInt(live.size()));
                    synchronized (t) {
                        t.when = 1 + rnd.nextInt(1000);
                        h.fix(t.idx);
                    }
                }
                h.updateMinWhen();
                assertTrue(h.verify(), "heap order broken at step " + step);
                assertEquals(live.size(), h.size());
            }
        }
        // check() runs them in when order and leaves nothing due.
        List<Long> fired = new ArrayList<>();
        TimerHeap h2 = new TimerHeap(null, null);
        synchronized (h2) {
            for (int i = 0; i < 1000; i++) {
                RuntimeTimer t = new RuntimeTimer((a, w, d) -> fired.add(w), null);
                synchronized (t) {
                    t.when = 1 + rnd.nextInt(500);
                    h2.add(t);
                }
            }
            h2.updateMinWhen();
        }
        assertEquals(1000, h2.check(10_000));
        for (int i = 1; i < fired.size(); i++) {
            assertThat(fired.get(i)).isGreaterThanOrEqualTo(fired.get(i - 1));
        }
        assertEquals(0, h2.wakeTime());
    }

    @Test
    void periodicTimerSkipsMissedTicks() {
        TimerHeap h = new TimerHeap(null, null);
        List<Long> whens = new ArrayList<>();
        RuntimeTimer t = new RuntimeTimer((a, w, d) -> whens.add(w), null);
        synchronized (h) {
            synchronized (t) {
                t.when = 100;
                t.period = 10;
                h.add(t);
            }
            h.updateMinWhen();
        }
        assertEquals(1, h.check(135));
        assertEquals(List.of(100L), whens);
        assertEquals(140, h.wakeTime(), "next tick is the first multiple of the period after now");
    }

    // ---- sleeping -------------------------------------------------------------------------------

    @Test
    void sleepIsNeverEarlyInGoroutinesOrOnPlatformThreads() throws Exception {
        int n = 2_000 * STRESS;
        try (GoRuntime rt = runtime(2)) {
            AtomicInteger early = new AtomicInteger();
            AtomicLong worstEarly = new AtomicLong();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                rt.go(() -> {
                    long d = ThreadLocalRandom.current().nextLong(1_000, 3_000_000);
                    long t0 = System.nanoTime();
                    Go.sleep(Duration.ofNanos(d));
                    long slept = System.nanoTime() - t0;
                    if (slept < d) {
                        early.incrementAndGet();
                        worstEarly.accumulateAndGet(d - slept, Math::max);
                    }
                    done.countDown();
                });
            }
            assertTrue(done.await(60, TimeUnit.SECONDS));
            assertEquals(0, early.get(), "sleeps returned early, worst by ns: " + worstEarly.get());
            // An M counts the timers it ran after readying their goroutines, so the last
            // sleepers may finish a moment before the count includes them.
            GoTesting.await("timersFired >= " + n, () -> rt.stats().timersFired() >= n);
        }
        long t0 = System.nanoTime();
        Go.sleep(Duration.ofMillis(3));
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(3_000_000);
    }

    @Test
    void zeroAndNegativeSleepsReturnAtOnce() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            assertEquals(1, (int) rt.run(() -> {
                Go.sleep(Duration.ZERO);
                Go.sleep(Duration.ofMillis(-5));
                return 1;
            }));
        }
    }

    /** 100k sleepers park only themselves: a handful of threads, every timer fires. */
    @Test
    void hundredThousandConcurrentSleeps() throws Exception {
        int n = 100_000;
        try (GoRuntime rt = runtime(2)) {
            CountDownLatch done = new CountDownLatch(n);
            AtomicInteger early = new AtomicInteger();
            AtomicInteger maxThreads = new AtomicInteger();
            rt.run(() -> {
                for (int i = 0; i < n; i++) {
                    Go.go(() -> {
                        long d = ThreadLocalRandom.current().nextLong(1, 51) * 1_000_000;
                        long t0 = System.nanoTime();
                        Go.sleep(Duration.ofNanos(d));
                        if (System.nanoTime() - t0 < d) {
                            early.incrementAndGet();
                        }
                        done.countDown();
                    });
                }
                return null;
            });
            while (!done.await(5, TimeUnit.MILLISECONDS)) {
                maxThreads.accumulateAndGet(rt.stats().threads(), Math::max);
            }
            assertEquals(0, early.get());
            GoTesting.await("timersFired >= " + n, () -> rt.stats().timersFired() >= n);
            // A sleeper never holds a thread: Ms stay a small multiple of GOMAXPROCS.
            assertThat(maxThreads.get()).isLessThanOrEqualTo(8);
        }
    }

    // ---- runtime timers -------------------------------------------------------------------------

    /**
     * Every arming of a one-shot timer ends exactly once: it fires, or a stop() returns true,
     * or a reset() returns true (it was still pending and got re-armed). Racing threads and
     * goroutines must never lose or double an arming.
     */
    @Test
    void timerStopResetRacesAccountForEveryArming() throws Exception {
        int rounds = 20_000 * STRESS;
        try (GoRuntime rt = runtime(4)) {
            AtomicLong fired = new AtomicLong();
            RuntimeTimer t = new RuntimeTimer((a, w, d) -> fired.incrementAndGet(), null);
            AtomicLong resets = new AtomicLong();
            AtomicLong resetsPending = new AtomicLong();
            AtomicLong stopsPending = new AtomicLong();
            int workers = 4;
            CountDownLatch done = new CountDownLatch(workers + 1);
            Runnable body = () -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                for (int i = 0; i < rounds; i++) {
                    if (r.nextBoolean()) {
                        resets.incrementAndGet();
                        if (t.reset(RuntimeTimer.nanotime() + r.nextLong(0, 200_000), 0)) {
                            resetsPending.incrementAndGet();
                        }
                    } else if (t.stop()) {
                        stopsPending.incrementAndGet();
                    }
                    if ((i & 63) == 0) {
                        Go.yield();
                    }
                }
                done.countDown();
            };
            for (int w = 0; w < workers; w++) {
                rt.go(body);
            }
            Thread platform = Thread.ofPlatform().start(body);
            assertTrue(done.await(60, TimeUnit.SECONDS));
            platform.join();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (t.isPending() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(t.isPending()).isFalse();
            // A firing in flight (no longer pending, its callback not yet run) finishes its
            // increment: on a loaded machine its thread may be off CPU for a while. A lost
            // arming never arrives, a doubled one overshoots: the equality below tells both.
            long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (fired.get() + stopsPending.get() + resetsPending.get() < resets.get() && System.nanoTime() < settle) {
                Thread.sleep(1);
            }
            assertEquals(resets.get(), fired.get() + stopsPending.get() + resetsPending.get(),
                    "armings = fired + stopped + re-armed");
        }
    }

    @Test
    void timersArmedOnPlatformThreadsFireOnTheSharedHeap() throws Exception {
        CountDownLatch fired = new CountDownLatch(100);
        AtomicInteger early = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            long when = RuntimeTimer.nanotime() + ThreadLocalRandom.current().nextLong(1, 20) * 1_000_000;
            new RuntimeTimer((a, w, d) -> {
                if (RuntimeTimer.nanotime() < when) {
                    early.incrementAndGet();
                }
                fired.countDown();
            }, null).reset(when, 0);
        }
        assertTrue(fired.await(10, TimeUnit.SECONDS));
        assertEquals(0, early.get());
    }

    /**
     * Go: TestTimerFairness, for timers parked on a P whose goroutine never yields: the sleeper's
     * timer sits in the busy P's heap and must be run by another M (a thief on its last steal
     * pass, or the netpoll owner that slept until it) while the busy goroutine still spins.
     */
    @Test
    void timerFairnessTimersOfABusyPFireElsewhere() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).sysmon(false).build())) {
            for (int round = 0; round < 5; round++) {
                AtomicBoolean woke = new AtomicBoolean();
                AtomicBoolean spinnerSawWake = new AtomicBoolean();
                CountDownLatch done = new CountDownLatch(2);
                rt.go(() -> {
                    // The spinner goes to runnext of this P, then this G sleeps on this P's heap:
                    // the spinner takes the P and never yields.
                    Go.go(() -> {
                        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                        while (!woke.get() && System.nanoTime() < end) {
                            Thread.onSpinWait();
                        }
                        spinnerSawWake.set(woke.get());
                        done.countDown();
                    });
                    Go.sleep(Duration.ofMillis(5));
                    woke.set(true);
                    done.countDown();
                });
                assertTrue(done.await(30, TimeUnit.SECONDS));
                assertTrue(spinnerSawWake.get(), "the sleeper woke only after the busy goroutine gave up");
            }
        }
    }
}
