package io.gosched.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.Received;
import io.gosched.runtime.Select;
import io.gosched.sync.WaitGroup;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Go's time/tick_test.go, ported under Go's names: the Go 1.23 timer channels
 * ({@code asynctimerchan=0}: unbuffered, no stale values after Stop/Reset, garbage-collected when
 * abandoned) and tickers. TestChan, TestAfterTimes and TestTickTimes run in a synctest bubble:
 * each "sleep until the timer had its chance" is exact on the fake clock instead of real
 * milliseconds plus retries under load. The GC and stress tests stay on the real clock, which is
 * what they exercise.
 */
@Timeout(120)
class TickTest {

    static final Duration SCHED = Duration.ofMillis(10);
    static final int TRIES = 100;

    // ---- TestTimerGC ----------------------------------------------------------------------------

    /**
     * Abandoned timers and tickers, stopped or not, are garbage-collected: nothing but the
     * program's own references holds a timer nobody is blocked on. Go counts live allocations
     * after runtime.GC(); here weak references to N of them must all clear within a bounded
     * number of System.gc() calls.
     */
    @Test
    void TestTimerGC() throws Exception {
        GoTesting.runGo(2, () -> {
            run("After", () -> Time.after(Duration.ofHours(1)));
            run("Tick", () -> Time.tick(Duration.ofHours(1)));
            run("NewTimer", () -> Timer.newTimer(Duration.ofHours(1)));
            run("NewTicker", () -> Ticker.newTicker(Duration.ofHours(1)));
            run("NewTimerStop", () -> {
                Timer t = Timer.newTimer(Duration.ofHours(1));
                t.stop();
                return t;
            });
            run("NewTickerStop", () -> {
                Ticker t = Ticker.newTicker(Duration.ofHours(1));
                t.stop();
                return t;
            });
            // The select loop of Go's issue: the other case is ready, the timer is dropped.
            Chan<Boolean> ready = Chan.make(1);
            run("SelectAfter", () -> {
                ready.send(true);
                Chan<Instant> c = Time.after(Duration.ofHours(1));
                Select.select(Select.recv(ready), Select.recv(c));
                return c;
            });
            // A select that parked on the timer (so it was in a heap) and then lost to another case.
            run("ParkedSelectAfter", () -> {
                Chan<Boolean> other = Chan.make();
                Go.go(() -> {
                    Time.sleep(Duration.ofNanos(1));
                    other.send(true);
                });
                Chan<Instant> c = Time.after(Duration.ofHours(1));
                Select.select(Select.recv(other), Select.recv(c));
                return c;
            });
        });
    }

    private static void run(String what, Supplier<Object> f) {
        int n = 1000;
        List<WeakReference<Object>> refs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            refs.add(new WeakReference<>(f.get()));
        }
        int live = n;
        for (int gc = 0; gc < 20 && live > 0; gc++) {
            System.gc();
            Time.sleep(Duration.ofMillis(5));
            live = 0;
            for (WeakReference<Object> r : refs) {
                if (r.get() != null) {
                    live++;
                }
            }
        }
        assertEquals(0, live, what + " did not get GC'ed: still reachable out of " + n);
    }

    // ---- TestChan -------------------------------------------------------------------------------

    interface TimerLike {
        boolean stop();

        boolean reset(Duration d);
    }

    /** Go's tickerTimer: a Ticker with Timer's boolean Stop and Reset. */
    static final class TickerTimer implements TimerLike {
        final Ticker ticker;
        boolean stopped;

        TickerTimer(Ticker ticker) {
            this.ticker = ticker;
        }

        public boolean stop() {
            boolean pending = !stopped;
            stopped = true;
            ticker.stop();
            return pending;
        }

        public boolean reset(Duration d) {
            boolean pending = !stopped;
            stopped = false;
            ticker.reset(d);
            return pending;
        }
    }

    /** Go 1.23 semantics (asynctimerchan=0) for Timer and Ticker. */
    @Test
    void TestChan() throws Exception {
        // In a synctest bubble, as Go 1.25 runs it under synctest too: every "sleep until the
        // timer had its chance" is exact on the fake clock instead of 10 ms of real time plus
        // retries under load.
        io.gosched.testing.Synctest.test(() -> {
            Timer tim = Timer.newTimer(Duration.ofSeconds(10_000));
            testTimerChan(new TimerLike() {
                public boolean stop() {
                    return tim.stop();
                }

                public boolean reset(Duration d) {
                    return tim.reset(d);
                }
            }, tim.c(), false);
            TickerTimer tk = new TickerTimer(Ticker.newTicker(Duration.ofSeconds(10_000)));
            testTimerChan(tk, tk.ticker.c(), true);
        });
    }

    private static void noTick(Chan<Instant> c) {
        Received<Instant> r = c.tryRecv();
        if (r != null) {
            fail("extra tick: " + r.value());
        }
    }

    private static void assertTick(Chan<Instant> c) {
        if (c.tryRecv() != null) {
            return;
        }
        for (int i = 0; i < TRIES; i++) {
            Time.sleep(SCHED);
            if (c.tryRecv() != null) {
                return;
            }
        }
        fail("missing tick");
    }

    private static void notDone(Chan<Boolean> done) {
        if (done.tryRecv() != null) {
            fail("early done");
        }
    }

    private static void waitDone(Chan<Boolean> done) {
        for (int i = 0; i < TRIES; i++) {
            Time.sleep(SCHED);
            if (done.tryRecv() != null) {
                return;
            }
        }
        fail("never got done");
    }

    private static void testTimerChan(TimerLike tim, Chan<Instant> c, boolean isTicker) {
        Duration one = Duration.ofNanos(1);
        // Test simple stop; timer never in heap.
        tim.stop();
        noTick(c);

        // Test modify of timer not in heap.
        tim.reset(Duration.ofSeconds(10_000));
        noTick(c);

        // Test modify of timer in heap. Go 1.23: the channel is unbuffered (len and cap 0).
        tim.reset(one);
        Time.sleep(SCHED);
        assertEquals(0, c.len(), "len(C)");
        assertEquals(0, c.cap(), "cap(C)");
        assertTick(c);

        // Sleep long enough that a second tick must happen if this is a ticker.
        // Test that Reset does not lose the tick that should have happened.
        Time.sleep(SCHED);
        tim.reset(Duration.ofSeconds(10_000));
        noTick(c);

        // Reset timer in heap (already reset above, but just in case).
        tim.reset(Duration.ofSeconds(10_000));

        // Test stop while timer in heap (because goroutine is blocked on <-C).
        Chan<Boolean> done = Chan.make();
        notDone(done);
        Go.go(() -> {
            c.recv();
            done.close();
        });
        Time.sleep(SCHED);
        notDone(done);

        // Test reset far away while timer in heap.
        tim.reset(Duration.ofSeconds(20_000));
        Time.sleep(SCHED);
        notDone(done);

        // Test imminent reset while in heap.
        tim.reset(one);
        waitDone(done);

        // If this is a ticker, another tick should have come in already (they are 1ns apart).
        // If a timer, it should have stopped.
        if (isTicker) {
            assertTick(c);
        } else {
            noTick(c);
        }
        tim.stop();
        noTick(c);

        // Again using select and with two goroutines waiting.
        tim.reset(Duration.ofSeconds(10_000));
        Chan<Boolean> done2 = Chan.make(2);
        Chan<Boolean> done1a = Chan.make();
        Chan<Boolean> done2a = Chan.make();
        Chan<Boolean> stop = Chan.make();
        for (Chan<Boolean> fin : List.of(done1a, done2a)) {
            Go.go(() -> {
                if (Select.select(Select.recv(c), Select.recv(stop)).index() == 0) {
                    done2.send(true);
                }
                fin.close();
            });
        }
        Time.sleep(SCHED);
        notDone(done2);
        tim.reset(SCHED.dividedBy(2));
        Time.sleep(SCHED);
        waitDone(done2);
        tim.stop();
        stop.close();
        waitDone(done1a);
        waitDone(done2a);
        if (isTicker) {
            done2.tryRecv(); // an extra send might have sent done again (done is buffered for it)
            c.tryRecv(); // and an extra send after that might have filled C
        }
        notDone(done2);

        // Test blocking on the channel when the timer is stopped.
        Chan<Boolean> stop2 = Chan.make();
        Chan<Boolean> done3 = Chan.make(2);
        AtomicReference<String> unexpected = new AtomicReference<>();
        for (int i = 0; i < 2; i++) {
            Go.go(() -> {
                if (Select.select(Select.recv(c), Select.recv(stop2)).index() == 0) {
                    unexpected.set("unexpected data");
                }
                done3.send(true);
            });
        }
        Time.sleep(SCHED);
        stop2.close();
        waitDone(done3);
        waitDone(done3);
        assertEquals(null, unexpected.get());

        // Test that Stop and Reset block old values from being received (go.dev/issue/37196).
        tim.reset(one);
        Time.sleep(Duration.ofMillis(10));
        assertTrue(tim.stop(), "tim.Stop() = false, want true");
        noTick(c);

        tim.reset(Duration.ofHours(1));
        noTick(c);
        assertTrue(tim.reset(one), "tim.Reset() = false, want true");
        assertTick(c);
        Time.sleep(Duration.ofMillis(10));
        if (isTicker) {
            assertTick(c);
            Time.sleep(Duration.ofMillis(10));
        } else {
            noTick(c);
        }
        assertEquals(isTicker, tim.reset(Duration.ofHours(1)), "tim.Reset(Hour)");
        noTick(c);
    }

    /** Go: Tick returns nil for a non-positive duration (NewTicker panics). */
    @Test
    void tickOfNonPositiveDurationIsNil() {
        assertEquals(null, Time.tick(Duration.ZERO));
        assertEquals(null, Time.tick(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> Ticker.newTicker(Duration.ZERO));
    }

    /** A timer channel is receive-only, as Go's {@code <-chan Time} is. */
    @Test
    void timerChannelsAreReceiveOnly() {
        Timer t = Timer.newTimer(Duration.ofHours(1));
        assertThrows(UnsupportedOperationException.class, () -> t.c().send(Instant.now()));
        assertThrows(UnsupportedOperationException.class, () -> t.c().trySend(Instant.now()));
        assertThrows(UnsupportedOperationException.class, () -> t.c().close());
        assertThrows(UnsupportedOperationException.class, () -> Select.send(t.c(), Instant.now()));
        t.stop();
    }

    // ---- TestAfterTimes, TestTickTimes ----------------------------------------------------------

    /**
     * After(10ms) read 500 ms later delivers a time from start+10ms, not start+500ms (the timer
     * fired lazily, on the receive, must still report when it was due).
     */
    @Test
    void TestAfterTimes() {
        io.gosched.testing.Synctest.test(() -> {
            Instant start = Time.now();
            Chan<Instant> c = Time.after(Duration.ofMillis(10));
            Time.sleep(Duration.ofMillis(500));
            assertEquals(Duration.ofMillis(10), Duration.between(start, c.recv()),
                    "After(10ms) read 500 ms later delivers the time it was due");
        });
    }

    @Test
    void TestTickTimes() {
        io.gosched.testing.Synctest.test(() -> {
            Instant start = Time.now();
            Ticker tk = Ticker.newTicker(Duration.ofMillis(10));
            Time.sleep(Duration.ofMillis(500));
            assertEquals(Duration.ofMillis(10), Duration.between(start, tk.c().recv()),
                    "NewTicker(10ms) read 500 ms later delivers its first due time");
            tk.stop();
        });
    }

    // ---- TestTickerStress, TestTickerConcurrentStress -------------------------------------------

    @Test
    @Timeout(30) // the failure Go guards against is a hang
    void TestTickerStress() throws Exception {
        GoTesting.runGo(2, () -> {
            AtomicBoolean stop = new AtomicBoolean();
            Go.go(() -> {
                while (!stop.get()) {
                    System.gc();
                    Time.sleep(Duration.ofNanos(1));
                }
            });
            Ticker ticker = Ticker.newTicker(Duration.ofNanos(1));
            for (int i = 0; i < 100; i++) {
                ticker.c().recv();
            }
            ticker.stop();
            stop.set(true);
        });
    }

    @Test
    void TestTickerConcurrentStress() throws Exception {
        GoTesting.runGo(2, () -> {
            AtomicBoolean stop = new AtomicBoolean();
            Go.go(() -> {
                while (!stop.get()) {
                    System.gc();
                    Time.sleep(Duration.ofNanos(1));
                }
            });
            Ticker ticker = Ticker.newTicker(Duration.ofNanos(1));
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < 10; i++) {
                wg.add(1);
                Go.go(() -> {
                    for (int j = 0; j < 100; j++) {
                        ticker.c().recv();
                    }
                    wg.done();
                });
            }
            wg.await();
            ticker.stop();
            stop.set(true);
            assertThat(ticker.c().cap()).isZero();
        });
    }
}
