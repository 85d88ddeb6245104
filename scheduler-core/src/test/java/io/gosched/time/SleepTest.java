package io.gosched.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.Select;
import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go's time/sleep_test.go, ported under Go's names, run as goroutines. Where Go runs a test for
 * both timer implementations ("impl=chan": NewTimer's channel timer, "impl=func": a channel fed
 * by an AfterFunc, which never takes the timer-channel paths), so do these.
 */
@Timeout(120)
class SleepTest {

    /** The two shapes of Go's tests: a timer and the channel its value arrives on. */
    interface TestTimer {
        Chan<Instant> c();

        boolean stop();

        boolean reset(Duration d);
    }

    /** impl=chan: time.NewTimer. */
    static TestTimer newTimer(Duration d) {
        Timer t = Timer.newTimer(d);
        return new TestTimer() {
            public Chan<Instant> c() {
                return t.c();
            }

            public boolean stop() {
                return t.stop();
            }

            public boolean reset(Duration d2) {
                return t.reset(d2);
            }
        };
    }

    /**
     * impl=func: Go's newTimerFunc, NewTimer simulated with AfterFunc and a buffered channel, so
     * that none of the timer-channel special cases apply.
     */
    static TestTimer newTimerFunc(Duration d) {
        Chan<Instant> c = Chan.make(1);
        Timer t = Time.afterFunc(d, () -> c.send(Instant.now()));
        return new TestTimer() {
            public Chan<Instant> c() {
                return c;
            }

            public boolean stop() {
                return t.stop();
            }

            public boolean reset(Duration d2) {
                return t.reset(d2);
            }
        };
    }

    static final Duration MS = Duration.ofMillis(1);

    static Duration ms(long n) {
        return Duration.ofMillis(n);
    }

    // ---- TestAfterStop -------------------------------------------------------------------------

    @Test
    void TestAfterStop() throws Exception {
        GoTesting.runGo(2, () -> {
            testAfterStop("impl=chan", SleepTest::newTimer);
            testAfterStop("impl=func", SleepTest::newTimerFunc);
        });
    }

    /**
     * A timer stopped before it runs never delivers, even after a longer timer fired; and a second
     * Stop returns false. Timing-dependent, so (as in Go) only five failures in a row count.
     */
    private static void testAfterStop(String impl, Function<Duration, TestTimer> newTimer) {
        List<String> errs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Time.afterFunc(ms(100), () -> {
            });
            TestTimer t0 = newTimer.apply(ms(50));
            Chan<Boolean> c1 = Chan.make(1);
            Timer t1 = Time.afterFunc(ms(150), () -> c1.send(true));
            Chan<Instant> c2 = Time.after(ms(200));
            if (!t0.stop()) {
                errs.add("failed to stop event 0");
                continue;
            }
            if (!t1.stop()) {
                errs.add("failed to stop event 1");
                continue;
            }
            c2.recv();
            int s = Select.trySelect(Select.recv(t0.c()), Select.recv(c1)).index();
            if (s == 0) {
                errs.add("event 0 was not stopped");
                continue;
            }
            if (s == 1) {
                errs.add("event 1 was not stopped");
                continue;
            }
            if (t1.stop()) {
                errs.add("Stop returned true twice");
                continue;
            }
            return;
        }
        fail(impl + ": saw " + errs.size() + " errors: " + errs);
    }

    // ---- TestTimerStopStress --------------------------------------------------------------------

    /** 100 goroutines each stop their AfterFunc halfway; none may run. (Go: 2 s timers; here 400 ms.) */
    @Test
    void TestTimerStopStress() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        GoTesting.runGo(2, () -> {
            for (int i = 0; i < 100; i++) {
                Go.go(() -> {
                    Timer timer = Time.afterFunc(ms(400), ran::incrementAndGet);
                    Time.sleep(ms(200));
                    timer.stop();
                });
            }
            Time.sleep(ms(600));
        });
        assertEquals(0, ran.get(), "timers that were not stopped");
    }

    // ---- TestSleepZeroDeadlock ------------------------------------------------------------------

    /** Sleep(0) interleaved with GCs and channel operations must not leave the goroutine waiting. */
    @Test
    @Timeout(30) // the failure Go guards against is a hang
    void TestSleepZeroDeadlock() throws Exception {
        GoTesting.runGo(4, () -> {
            Chan<Boolean> c = Chan.make();
            Go.go(() -> {
                for (int i = 0; i < 20; i++) {
                    System.gc();
                }
                c.send(true);
            });
            for (int i = 0; i < 100; i++) {
                Time.sleep(Duration.ZERO);
                Chan<Boolean> tmp = Chan.make(1);
                tmp.send(true);
                tmp.recv();
            }
            c.recv();
        });
    }

    // ---- TestReset ------------------------------------------------------------------------------

    private static String testReset(Duration d) {
        Timer t0 = Timer.newTimer(d.multipliedBy(2));
        Time.sleep(d);
        if (!t0.reset(d.multipliedBy(3))) {
            return "resetting unfired timer returned false";
        }
        Time.sleep(d.multipliedBy(2));
        if (t0.c().tryRecv() != null) {
            return "timer fired early";
        }
        Time.sleep(d.multipliedBy(2));
        if (t0.c().tryRecv() == null) {
            return "reset timer did not fire";
        }
        if (t0.reset(ms(50))) {
            return "resetting expired timer returned true";
        }
        return null;
    }

    /** Reset moves a pending timer later and reports it pending; an expired, received one is not. */
    @Test
    void TestReset() throws Exception {
        GoTesting.runGo(2, () -> {
            Duration d = MS;
            List<String> errs = new ArrayList<>();
            for (;;) {
                String err = testReset(d);
                if (err == null) {
                    break;
                }
                errs.add(err + " at " + d);
                d = d.multipliedBy(2);
                if (d.compareTo(Duration.ofSeconds(10)) > 0) {
                    fail(String.join("; ", errs));
                }
            }
        });
    }

    // ---- TestOverflowSleep ----------------------------------------------------------------------

    /** Durations so large they overflow neither fire early nor disturb other timers; negative ones fire at once. */
    @Test
    void TestOverflowSleep() throws Exception {
        GoTesting.runGo(2, () -> {
            Duration big = Duration.ofNanos(Long.MAX_VALUE);
            AtomicBoolean woke = new AtomicBoolean();
            Go.go(() -> {
                Time.sleep(big);
                woke.set(true);
            });
            assertEquals(1, Select.select(Select.recv(Time.after(big)), Select.recv(Time.after(ms(25)))).index(),
                    "big timeout fired");
            Duration neg = Duration.ofNanos(Long.MIN_VALUE);
            Time.sleep(neg);
            assertEquals(0, Select.select(Select.recv(Time.after(neg)), Select.recv(Time.after(Duration.ofSeconds(1)))).index(),
                    "negative timeout didn't fire");
            assertFalse(woke.get(), "big sleep returned");
        });
    }

    // ---- TestAfterFuncStarvation ----------------------------------------------------------------

    /**
     * With one P and two goroutines that always keep one of them runnable, an AfterFunc's goroutine
     * still gets to run (go.dev/issue/65178).
     */
    @Test
    @Timeout(30) // the failure Go guards against is a hang
    void TestAfterFuncStarvation() throws Exception {
        GoTesting.runGo(1, () -> {
            WaitGroup wg = new WaitGroup();
            AtomicBoolean stop = new AtomicBoolean();
            Chan<Boolean> c = Chan.make(1);
            wg.add(2);
            Go.go(() -> {
                while (!stop.get()) {
                    c.send(true);
                }
                c.close();
                wg.done();
            });
            Go.go(() -> {
                for (Boolean ignored : c) {
                    // drain
                }
                wg.done();
            });
            Time.afterFunc(Duration.ofNanos(1_000), () -> stop.set(true));
            wg.await();
        });
    }

    // ---- TestZeroTimer --------------------------------------------------------------------------

    /** Zero-duration timers are never missed (go.dev/issue/44868). Go: 1,000,000 rounds; here 20,000. */
    @Test
    void TestZeroTimer() throws Exception {
        GoTesting.runGo(2, () -> {
            testZeroTimer(SleepTest::newTimer);
            testZeroTimer(SleepTest::newTimerFunc);
            TestTimer cached = newTimerFunc(Duration.ofHours(1));
            testZeroTimer(d -> {
                cached.reset(d);
                return cached;
            });
        });
    }

    private static void testZeroTimer(Function<Duration, TestTimer> newTimer) {
        for (int i = 0; i < 20_000; i++) {
            long s = System.nanoTime();
            TestTimer ti = newTimer.apply(Duration.ZERO);
            ti.c().recv();
            long diff = System.nanoTime() - s;
            if (diff > 2_000_000_000L) {
                fail("Expected time to get value from Timer channel in less than 2 sec, took " + diff + " ns");
            }
        }
    }

    // ---- TestTimerModifiedEarlier ---------------------------------------------------------------

    /** Rapidly moving a timer earlier does not drop it (go.dev/issue/47329). Both impls here; Go: func. */
    @Test
    void TestTimerModifiedEarlier() throws Exception {
        GoTesting.runGo(2, () -> {
            testTimerModifiedEarlier(SleepTest::newTimerFunc);
            testTimerModifiedEarlier(SleepTest::newTimer);
        });
    }

    private static void testTimerModifiedEarlier(Function<Duration, TestTimer> newTimer) {
        Duration past = Duration.ofSeconds(-1_000_000_000L); // Go: Until(Unix(0, 0))
        int failures = 0;
        for (int i = 0; i < 1000; i++) {
            TestTimer timer = newTimer.apply(Duration.ofHours(1));
            for (int j = 0; j < 10; j++) {
                if (!timer.stop()) {
                    timer.c().recv();
                }
                timer.reset(past);
            }
            Timer deadline = Timer.newTimer(Duration.ofSeconds(10));
            long now = System.nanoTime();
            int s = Select.select(Select.recv(timer.c()), Select.recv(deadline.c())).index();
            deadline.stop();
            if (s == 1) {
                fail("deadline expired");
            }
            if (System.nanoTime() - now > 8_000_000_000L) {
                failures++;
            }
        }
        assertEquals(0, failures, "timers that took too long");
    }

    // ---- TestAdjustTimers -----------------------------------------------------------------------

    /** Moving timers earlier and later at random loses none of their firings (go.dev/issue/47762). */
    @Test
    void TestAdjustTimers() throws Exception {
        GoTesting.runGo(2, () -> {
            testAdjustTimers(SleepTest::newTimerFunc);
            testAdjustTimers(SleepTest::newTimer);
        });
    }

    private static void testAdjustTimers(Function<Duration, TestTimer> newTimer) {
        Random rnd = new Random();
        TestTimer[] timers = new TestTimer[100];
        int[] states = new int[timers.length];
        List<Integer> indices = new ArrayList<>();
        for (int i = 0; i < timers.length; i++) {
            indices.add(i);
        }
        java.util.Collections.shuffle(indices, rnd);
        while (!indices.isEmpty()) {
            int ii = rnd.nextInt(indices.size());
            int i = indices.get(ii);
            TestTimer timer = timers[i];
            int state = states[i]++;
            switch (state) {
                case 0 -> timers[i] = newTimer.apply(Duration.ZERO);
                case 1 -> timer.c().recv(); // the timer is now idle
                // Reset to various long durations, which we'll cancel.
                case 2 -> assertFalse(timer.reset(Duration.ofMinutes(1)), "shouldn't be active (1)");
                case 4 -> assertFalse(timer.reset(Duration.ofMinutes(3)), "shouldn't be active (3)");
                case 6 -> assertFalse(timer.reset(Duration.ofMinutes(2)), "shouldn't be active (2)");
                // Stop and drain a long-duration timer.
                case 3, 5, 7 -> {
                    if (!timer.stop()) {
                        timer.c().recv();
                    }
                }
                // Start a short-duration timer we expect to select without blocking.
                case 8 -> assertFalse(timer.reset(Duration.ZERO), "timer.Reset returned true");
                case 9 -> {
                    long now = System.nanoTime();
                    timer.c().recv();
                    long dur = System.nanoTime() - now;
                    assertThat(dur).as("timer %d took too long to complete", i).isLessThan(750_000_000L);
                }
                // Timer is done. Swap with tail and remove.
                case 10 -> {
                    indices.set(ii, indices.get(indices.size() - 1));
                    indices.remove(indices.size() - 1);
                }
                default -> throw new AssertionError(state);
            }
        }
    }

    // ---- TestAfter, TestAfterTick ----------------------------------------------------------------

    /** After(d) delivers no earlier than d, and the time it delivers is no earlier than start + d. */
    @Test
    void TestAfter() throws Exception {
        GoTesting.runGo(2, () -> {
            Duration delay = ms(100);
            Instant start = Instant.now();
            long t0 = System.nanoTime();
            Instant end = Time.after(delay).recv();
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(delay.toNanos());
            assertFalse(end.isBefore(start.plus(delay)), "After(100ms) expect >= start+100ms, got " + end);
        });
    }
}
