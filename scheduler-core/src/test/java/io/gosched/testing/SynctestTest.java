package io.gosched.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.context.CancelContext;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.DeadlockException;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.Received;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Select;
import io.gosched.sync.Cond;
import io.gosched.sync.Mutex;
import io.gosched.sync.WaitGroup;
import io.gosched.time.Ticker;
import io.gosched.time.Time;
import io.gosched.time.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Go's src/internal/synctest/synctest_test.go, ported under Go's names, plus the rules of
 * testing/synctest's documentation (timers firing in order, context deadlines, nested bubbles).
 * Go's {@code t.Errorf} inside the bubble becomes a failure recorded in a list and asserted after
 * the bubble returns (an assertion thrown in a child goroutine would crash the runtime instead).
 */
@Timeout(120)
class SynctestTest {

    static final Instant START = Instant.parse("2000-01-01T00:00:00Z");

    /** Runs body in a bubble on a fresh 2-P runtime (the tests' GOMAXPROCS). */
    static void synctest(Runnable body) {
        io.gosched.runtime.Bubble.runOnFreshRuntime(body, SchedulerConfig.builder().gomaxprocs(2).build());
    }

    @Test
    void TestNow() {
        List<String> errors = new ArrayList<>();
        synctest(() -> {
            if (!Time.now().equals(START)) {
                errors.add("at start: " + Time.now());
            }
            Go.go(() -> {
                if (!Time.now().equals(START)) {
                    errors.add("new goroutine: " + Time.now());
                }
            });
            Go.sleep(Duration.ofSeconds(1));
            if (!Time.now().equals(START.plusSeconds(1))) {
                errors.add("after sleep: " + Time.now());
            }
        });
        assertThat(errors).isEmpty();
        assertThat(Time.now()).isAfter(Instant.parse("2020-01-01T00:00:00Z")); // the real clock outside
    }

    @Test
    void TestRunEmpty() {
        synctest(() -> {
        });
    }

    @Test
    void TestSimpleWait() {
        synctest(Synctest::await);
    }

    @Test
    void TestGoroutineWait() {
        synctest(() -> {
            Go.go(() -> {
            });
            Synctest.await();
        });
    }

    /** Wait waits for a chain of 100 goroutines handing a count down to exit. */
    @Test
    void TestWait() {
        AtomicBoolean done = new AtomicBoolean();
        synctest(() -> {
            Chan<Integer> ch = Chan.make();
            Runnable[] f = new Runnable[1];
            f[0] = () -> {
                int count = ch.recv();
                if (count == 0) {
                    done.set(true);
                } else {
                    Go.go(f[0]);
                    ch.send(count - 1);
                }
            };
            Go.go(f[0]);
            ch.send(100);
            Synctest.await();
            assertTrue(done.get(), "done = false after Wait");
        });
    }

    @Test
    void TestTimerReadBeforeDeadline() {
        AtomicReference<Duration> got = new AtomicReference<>();
        synctest(() -> {
            Instant start = Time.now();
            Timer tm = Timer.newTimer(Duration.ofSeconds(5));
            tm.c().recv();
            got.set(Duration.between(start, Time.now()));
        });
        assertEquals(Duration.ofSeconds(5), got.get());
    }

    @Test
    void TestTimerReadAfterDeadline() {
        AtomicReference<Instant> got = new AtomicReference<>();
        AtomicReference<Instant> want = new AtomicReference<>();
        synctest(() -> {
            Duration delay = Duration.ofSeconds(1);
            want.set(Time.now().plus(delay));
            Timer tm = Timer.newTimer(delay);
            Go.sleep(delay.multipliedBy(2));
            got.set(tm.c().recv());
        });
        assertEquals(want.get(), got.get());
    }

    @Test
    void TestTimerReset() {
        List<Instant> got = new ArrayList<>();
        synctest(() -> {
            Timer tm = Timer.newTimer(Duration.ofSeconds(1));
            got.add(tm.c().recv());
            tm.reset(Duration.ofSeconds(2));
            got.add(tm.c().recv());
            tm.reset(Duration.ofSeconds(3));
            Go.sleep(Duration.ofSeconds(1));
            tm.reset(Duration.ofSeconds(3));
            got.add(tm.c().recv());
        });
        assertThat(got).containsExactly(START.plusSeconds(1), START.plusSeconds(1 + 2), START.plusSeconds(1 + 2 + 4));
    }

    /** Membership propagates through an AfterFunc to the goroutine its function starts. */
    @Test
    void TestTimeAfter() {
        AtomicInteger i = new AtomicInteger();
        synctest(() -> {
            Time.afterFunc(Duration.ofSeconds(1), () -> {
                i.incrementAndGet(); // 1
                Go.go(() -> {
                    Go.sleep(Duration.ofSeconds(1));
                    i.incrementAndGet(); // 2
                });
            });
            Go.sleep(Duration.ofSeconds(3));
            Synctest.await();
            assertEquals(2, i.get(), "after sleep and wait");
        });
        assertEquals(2, i.get());
    }

    @Test
    void TestTimerAfterBubbleExit() {
        AtomicBoolean run = new AtomicBoolean();
        synctest(() -> Time.afterFunc(Duration.ofSeconds(1), () -> run.set(true)));
        assertFalse(run.get(), "timer ran before bubble exit");
    }

    /** A timer from outside is on the real clock; waiting on it is not durable (no deadlock). */
    @Test
    void TestTimerFromOutsideBubble() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Timer tm = Timer.newTimer(Duration.ofMillis(10));
                Synctest.test(() -> tm.c().recv());
                assertFalse(tm.stop(), "synctest.Run unexpectedly returned before timer fired");
                return null;
            });
        }
    }

    /** Timers due at the same instant do not always fire in the same order. */
    @Test
    void TestTimerNondeterminism() {
        AtomicBoolean seenBoth = new AtomicBoolean();
        synctest(() -> {
            boolean seen1 = false;
            boolean seen2 = false;
            for (int k = 0; k < 1000; k++) {
                Timer tm1 = Timer.newTimer(Duration.ofNanos(1));
                Timer tm2 = Timer.newTimer(Duration.ofNanos(1));
                int idx = Select.select(Select.recv(tm1.c()), Select.recv(tm2.c())).index();
                seen1 |= idx == 0;
                seen2 |= idx == 1;
                if (seen1 && seen2) {
                    seenBoth.set(true);
                    return;
                }
                Synctest.await();
            }
        });
        assertTrue(seenBoth.get(), "after 1000 iterations both timers should have been seen first");
    }

    /** A 0-duration timer's channel is readable at once, without waiting for the bubble to block. */
    @Test
    void TestTimerRunsImmediately() {
        AtomicReference<Received<Instant>> got = new AtomicReference<>();
        synctest(() -> got.set(Timer.newTimer(Duration.ZERO).c().tryRecv()));
        assertThat(got.get()).isNotNull();
        assertEquals(START, got.get().value());
    }

    /** Reading a timer's channel after it fired gives the time it fired, even if that is past. */
    @Test
    void TestTimerRanInPast() {
        AtomicReference<Received<Instant>> got = new AtomicReference<>();
        synctest(() -> {
            Timer tm = Timer.newTimer(Duration.ofSeconds(1));
            Go.sleep(Duration.ofSeconds(2));
            got.set(tm.c().tryRecv());
        });
        assertThat(got.get()).isNotNull();
        assertEquals(START.plusSeconds(1), got.get().value());
    }

    /** A 0-duration AfterFunc runs without waiting for the bubble to block. */
    @Test
    void TestAfterFuncRunsImmediately() {
        synctest(() -> {
            AtomicBoolean b = new AtomicBoolean();
            Time.afterFunc(Duration.ZERO, () -> b.set(true));
            while (!b.get()) {
                Go.yield();
            }
        });
    }

    /**
     * Channels from outside the bubble can be used inside, and waiting on them is not durable: the
     * bubble waits for the outside goroutine's real-time AfterFunc instead of reporting a deadlock.
     */
    @ParameterizedTest
    @ValueSource(strings = {"read closed", "read value", "write value", "select outside only", "select mixed"})
    void TestChannelFromOutsideBubble(String desc) throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Integer> ch = Chan.make();
                Chan<Boolean> choutside = Chan.make();
                Time.afterFunc(Duration.ofMillis(1), () -> {
                    switch (desc) {
                        case "read value" -> ch.send(0);
                        case "write value" -> ch.recv();
                        default -> ch.close();
                    }
                });
                Synctest.test(() -> {
                    switch (desc) {
                        case "write value" -> ch.send(0);
                        case "select outside only" -> Select.select(Select.recv(ch), Select.recv(choutside));
                        case "select mixed" -> {
                            Chan<Boolean> ch2 = Chan.make();
                            Select.select(Select.recv(ch), Select.recv(ch2));
                        }
                        default -> ch.recv();
                    }
                });
                return null;
            });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"receive", "send", "close"})
    void TestChannelMovedOutOfBubble(String desc) throws Exception {
        String want = switch (desc) {
            case "receive" -> "receive on synctest channel from outside bubble";
            case "send" -> "send on synctest channel from outside bubble";
            default -> "close of synctest channel from outside bubble";
        };
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                // outside_bubble: a bubble channel used by a goroutine in no bubble
                Chan<Chan<Boolean>> ch = Chan.make(1);
                Synctest.test(() -> ch.send(Chan.make()));
                Chan<Boolean> c = ch.recv();
                assertThatThrownBy(() -> use(desc, c)).isInstanceOf(IllegalStateException.class).hasMessage(want);
                // different_bubble: used from another bubble
                Synctest.test(() -> ch.send(Chan.make()));
                Chan<Boolean> c2 = ch.recv();
                AtomicReference<Throwable> thrown = new AtomicReference<>();
                Synctest.test(() -> {
                    try {
                        use(desc, c2);
                    } catch (IllegalStateException e) {
                        thrown.set(e);
                    }
                });
                assertThat(thrown.get()).hasMessage(want);
                return null;
            });
        }
    }

    private static void use(String desc, Chan<Boolean> c) {
        switch (desc) {
            case "receive" -> c.recv();
            case "send" -> c.send(true);
            default -> c.close();
        }
    }

    /** A bubble's timer used from outside fails (Go panics). */
    @ParameterizedTest
    @ValueSource(strings = {"read channel", "Reset", "Stop"})
    void TestTimerFromInsideBubble(String desc) throws Exception {
        String want = switch (desc) {
            case "read channel" -> "receive on synctest channel from outside bubble";
            case "Reset" -> "reset of synctest timer from outside bubble";
            default -> "stop of synctest timer from outside bubble";
        };
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Timer> ch = Chan.make(1);
                Synctest.test(() -> ch.send(Timer.newTimer(Duration.ofSeconds(1))));
                Timer tm = ch.recv();
                assertThatThrownBy(() -> {
                    switch (desc) {
                        case "read channel" -> tm.c().recv();
                        case "Reset" -> tm.reset(Duration.ofSeconds(1));
                        default -> tm.stop();
                    }
                }).isInstanceOf(IllegalStateException.class).hasMessage(want);
                return null;
            });
        }
        // And from a platform thread: the same rule.
        Chan<Timer> ch = Chan.make(1);
        synctest(() -> ch.send(Timer.newTimer(Duration.ofSeconds(1))));
        Timer tm = ch.recv();
        if (!desc.equals("read channel")) {
            assertThatThrownBy(() -> {
                if (desc.equals("Reset")) {
                    tm.reset(Duration.ofSeconds(1));
                } else {
                    tm.stop();
                }
            }).isInstanceOf(IllegalStateException.class).hasMessage(want);
        }
    }

    @Test
    void TestDeadlockRoot() {
        assertThatThrownBy(() -> synctest(() -> Select.select()))
                .isInstanceOf(DeadlockException.class)
                .hasMessageStartingWith("deadlock: all goroutines in bubble are blocked\n\n")
                .hasMessageContaining("[select (no cases)")
                .hasMessageContaining("SynctestTest");
    }

    @Test
    void TestDeadlockChild() {
        assertThatThrownBy(() -> synctest(() -> Go.go(() -> Select.select())))
                .isInstanceOf(DeadlockException.class)
                .hasMessageStartingWith("deadlock: main bubble goroutine has exited but blocked goroutines remain");
    }

    /** Once the root has exited, time does not move: a ticker's goroutine is deadlocked, not ticking. */
    @Test
    void TestDeadlockTicker() {
        AtomicBoolean ticked = new AtomicBoolean();
        assertThatThrownBy(() -> synctest(() -> Go.go(() -> {
            Time.tick(Duration.ofSeconds(1)).recv();
            ticked.set(true);
        }))).isInstanceOf(DeadlockException.class)
                .hasMessageStartingWith("deadlock: main bubble goroutine has exited but blocked goroutines remain")
                .hasMessageContaining("[chan receive (durable)");
        assertFalse(ticked.get(), "ticker unexpectedly ran");
    }

    /** The dump names every blocked goroutine of the bubble with its wait reason, and no other. */
    @Test
    void deadlockDumpShowsEachBlockedGoroutine() {
        DeadlockException e = org.junit.jupiter.api.Assertions.assertThrows(DeadlockException.class, () -> synctest(() -> {
            Chan<Integer> a = Chan.make();
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(a::recv);
            Go.go(wg::await);
            a.send(1);
            a.send(2); // the receiver took one; nobody takes the second
        }));
        assertEquals("deadlock: all goroutines in bubble are blocked", e.reason());
        assertThat(e.dump()).contains("[chan send (durable)").contains("[sync.WaitGroup.Wait (durable)");
        assertThat(e.dump().split("\n\n")).hasSize(2);
    }

    @Test
    void TestCond() {
        List<String> errors = new ArrayList<>();
        synctest(() -> {
            Mutex mu = new Mutex();
            Cond cond = new Cond(mu);
            Instant start = Time.now();
            Duration waitTime = Duration.ofMillis(1);
            Go.go(() -> {
                Go.sleep(waitTime);
                mu.lock();
                cond.signal();
                mu.unlock();
                Go.sleep(waitTime);
                mu.lock();
                cond.broadcast();
                mu.unlock();
            });
            mu.lock();
            cond.await();
            mu.unlock();
            if (!Duration.between(start, Time.now()).equals(waitTime)) {
                errors.add("after signal: " + Duration.between(start, Time.now()));
            }
            AtomicBoolean waiterDone = new AtomicBoolean();
            Go.go(() -> {
                mu.lock();
                cond.await();
                mu.unlock();
                waiterDone.set(true);
            });
            mu.lock();
            cond.await();
            mu.unlock();
            Synctest.await();
            if (!waiterDone.get()) {
                errors.add("after broadcast: waiter not done");
            }
            if (!Duration.between(start, Time.now()).equals(waitTime.multipliedBy(2))) {
                errors.add("after broadcast: " + Duration.between(start, Time.now()));
            }
        });
        assertThat(errors).isEmpty();
    }

    @Test
    void TestIteratorPush() {
        List<Instant> got = new ArrayList<>();
        synctest(() -> {
            Go.go(() -> {
                while (got.size() < 3) {
                    got.add(Time.now());
                    Go.sleep(Duration.ofSeconds(1));
                }
            });
            Go.sleep(Duration.ofSeconds(5));
            Synctest.await();
        });
        assertThat(got).containsExactly(START, START.plusSeconds(1), START.plusSeconds(2));
    }

    @Test
    void TestWaitGroupInBubble() {
        AtomicReference<Duration> took = new AtomicReference<>();
        synctest(() -> {
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(() -> {
                Go.sleep(Duration.ofSeconds(1));
                wg.done();
            });
            Instant start = Time.now();
            wg.await();
            took.set(Duration.between(start, Time.now()));
        });
        assertEquals(Duration.ofSeconds(1), took.get());
    }

    /** A WaitGroup from outside: Wait is not durable, so the bubble waits for the outside Done. */
    @Test
    void TestWaitGroupOutOfBubble() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                WaitGroup wg = new WaitGroup();
                wg.add(1);
                Chan<Boolean> donec = Chan.make();
                Go.go(() -> Synctest.test(wg::await));
                Go.go(() -> {
                    Go.sleep(Duration.ofMillis(1));
                    wg.done();
                    donec.close();
                });
                donec.recv();
                return null;
            });
        }
    }

    /** What wg.add(1) threw in a fresh bubble (caught there: the bubble itself ends normally), or null. */
    static Throwable addInABubble(WaitGroup wg) {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        synctest(() -> {
            try {
                wg.add(1);
            } catch (IllegalStateException e) {
                thrown.set(e);
            }
        });
        return thrown.get();
    }

    /** Go: TestWaitGroupMovedIntoBubble. An add from a bubble to a group counting for outside. */
    @Test
    void TestWaitGroupMovedIntoBubble() {
        WaitGroup wg = new WaitGroup();
        wg.add(1);
        assertThat(addInABubble(wg)).hasMessage("sync: WaitGroup.Add called from inside and outside synctest bubble");
        wg.done(); // the refused add left the group as it was: one count, for outside
        wg.await();
    }

    /** Go: TestWaitGroupMovedOutOfBubble. An add from outside to a group still counting for a bubble. */
    @Test
    void TestWaitGroupMovedOutOfBubble() {
        WaitGroup wg = new WaitGroup();
        synctest(() -> wg.add(1));
        assertThatThrownBy(() -> wg.add(1)).isInstanceOf(IllegalStateException.class)
                .hasMessage("sync: WaitGroup.Add called from inside and outside synctest bubble");
    }

    /** Go: TestWaitGroupMovedBetweenBubblesWithNonZeroCount. */
    @Test
    void TestWaitGroupMovedBetweenBubblesWithNonZeroCount() {
        WaitGroup wg = new WaitGroup();
        synctest(() -> wg.add(1));
        assertThat(addInABubble(wg)).hasMessage("sync: WaitGroup.Add called from multiple synctest bubbles");
    }

    /** Go: TestWaitGroupMovedBetweenBubblesWithZeroCount. Back at zero, the group is free again. */
    @Test
    void TestWaitGroupMovedBetweenBubblesWithZeroCount() {
        WaitGroup wg = new WaitGroup();
        synctest(() -> {
            wg.add(1);
            wg.done();
        });
        synctest(() -> {
            wg.add(1);
            wg.done();
        });
        wg.add(1); // and from outside
        wg.done();
    }

    /** Go: TestWaitGroupMovedBetweenBubblesAfterWait. A wait in each bubble is durable (the clock moves). */
    @Test
    void TestWaitGroupMovedBetweenBubblesAfterWait() {
        WaitGroup wg = new WaitGroup();
        List<Duration> took = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            synctest(() -> {
                Instant start = Time.now();
                wg.go(() -> Go.sleep(Duration.ofSeconds(3)));
                wg.await();
                took.add(Duration.between(start, Time.now()));
            });
        }
        assertThat(took).containsExactly(Duration.ofSeconds(3), Duration.ofSeconds(3));
    }

    /** Effects in a bubble happen before Wait returns, and before test returns. */
    @Test
    void TestHappensBefore() {
        int[] v = new int[2];
        synctest(() -> {
            v[0]++;
            v[1]++;
            Go.go(() -> v[0]++);
            Go.go(() -> v[1]++);
            Synctest.await();
            v[0]++;
            v[1]++;
            Chan<Boolean> ch1 = Chan.make();
            Go.go(() -> {
                v[0]++;
                ch1.recv();
            });
            Go.go(() -> {
                v[1]++;
                ch1.recv();
            });
            Synctest.await();
            v[0]++;
            v[1]++;
            ch1.close();
            Time.afterFunc(Duration.ZERO, () -> v[0]++);
            Time.afterFunc(Duration.ZERO, () -> v[1]++);
            Synctest.await();
            v[0]++;
            v[1]++;
            Chan<Boolean> ch2 = Chan.make();
            Time.afterFunc(Duration.ZERO, () -> {
                v[0]++;
                ch2.recv();
            });
            Time.afterFunc(Duration.ZERO, () -> {
                v[1]++;
                ch2.recv();
            });
            Synctest.await();
            v[0]++;
            v[1]++;
            ch2.close();
        });
        synctest(() -> {
            Go.go(() -> Go.go(() -> v[0]++));
            Go.go(() -> Go.go(() -> v[1]++));
        });
        assertEquals(10, v[0]);
        assertEquals(10, v[1]);
    }

    // ---- testing/synctest's documented rules ---------------------------------------------------

    @Test
    void nestedBubblesAreRejected() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        synctest(() -> {
            try {
                Synctest.test(() -> {
                });
            } catch (IllegalStateException e) {
                thrown.set(e);
            }
        });
        assertThat(thrown.get()).hasMessage("synctest.Run called from within a synctest bubble");
    }

    @Test
    void waitOutsideBubbleFails() {
        assertThatThrownBy(Synctest::await).isInstanceOf(IllegalStateException.class).hasMessage("goroutine is not in a bubble");
    }

    /**
     * Only one goroutine of a bubble may wait at a time. With one P the root runs until it parks in
     * Wait, so the child's Wait always finds the root's in progress.
     */
    @Test
    void waitInTwoGoroutinesAtOnceFails() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        io.gosched.runtime.Bubble.runOnFreshRuntime(() -> {
            Go.go(() -> {
                try {
                    Synctest.await();
                } catch (IllegalStateException e) {
                    thrown.set(e);
                }
            });
            Synctest.await();
        }, SchedulerConfig.builder().gomaxprocs(1).build());
        assertThat(thrown.get()).isNotNull().hasMessage("wait already in progress");
    }

    /** Timers due at different times fire in the order of their deadlines, each at its own time. */
    @Test
    void timersFireInOrder() {
        List<String> fired = new ArrayList<>();
        synctest(() -> {
            Chan<String> order = Chan.make(10);
            int[] secs = {5, 1, 4, 2, 3};
            for (int s : secs) {
                Time.afterFunc(Duration.ofSeconds(s), () -> order.trySend(s + "s@" + Duration.between(START, Time.now()).toSeconds()));
            }
            Go.sleep(Duration.ofSeconds(10));
            for (int k = 0; k < secs.length; k++) {
                fired.add(order.recv());
            }
        });
        assertThat(fired).containsExactly("1s@1", "2s@2", "3s@3", "4s@4", "5s@5");
    }

    /** A ticker ticks on the bubble's clock, every period exactly. */
    @Test
    void tickerTicksOnTheBubbleClock() {
        List<Instant> ticks = new ArrayList<>();
        synctest(() -> {
            Ticker t = Ticker.newTicker(Duration.ofMinutes(1));
            for (int k = 0; k < 3; k++) {
                ticks.add(t.c().recv());
            }
            t.stop();
        });
        assertThat(ticks).containsExactly(START.plusSeconds(60), START.plusSeconds(120), START.plusSeconds(180));
    }

    /** A context deadline expires on the bubble's clock: a one-hour timeout takes no real time. */
    @Test
    void contextDeadlineUsesTheBubbleClock() {
        AtomicReference<Object> err = new AtomicReference<>();
        AtomicReference<Instant> at = new AtomicReference<>();
        synctest(() -> {
            CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofHours(1));
            assertEquals(START.plus(Duration.ofHours(1)), ctx.deadline().orElseThrow());
            ctx.done().recv();
            err.set(ctx.err());
            at.set(Time.now());
            ctx.cancel();
        });
        assertEquals(Context.DEADLINE_EXCEEDED, err.get());
        assertEquals(START.plus(Duration.ofHours(1)), at.get());
    }

    /**
     * Go counts the goroutine running a bubble timer's function as a running member, so
     * synctest.Wait cannot return while the driver is still inside a timer function that goes
     * on to start a goroutine: here a deadline's cancel, which closes done (readying the root)
     * and only then starts the Context.afterFunc goroutine. After the root's await, that
     * goroutine must have existed and run to its end. Both shapes: the root woken by done
     * itself, and by a sleep due at the same instant; on 2 Ps, repeated.
     */
    @Test
    void synctestAwaitWaitsForTheGoroutineATimerFunctionStarts() throws Exception {
        AtomicInteger missed = new AtomicInteger();
        AtomicInteger rounds = new AtomicInteger();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                for (int round = 0; round < 2_000 * GoTesting.STRESS; round++) {
                    boolean wokenByDone = round % 2 == 0;
                    Synctest.test(() -> {
                        CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofSeconds(1));
                        AtomicBoolean ran = new AtomicBoolean();
                        Context.afterFunc(ctx, () -> ran.set(true));
                        if (wokenByDone) {
                            ctx.done().recv();
                        } else {
                            Go.sleep(Duration.ofSeconds(1));
                        }
                        Synctest.await();
                        rounds.incrementAndGet();
                        if (!ran.get()) {
                            missed.incrementAndGet();
                        }
                    });
                }
                return null;
            });
        }
        assertThat(rounds.get()).isEqualTo(2_000 * GoTesting.STRESS);
        assertThat(missed.get()).as("rounds in which await() returned before the afterFunc goroutine ran").isZero();
    }

    /** A select between a result and a timeout, the common shape: the timeout wins when nothing comes. */
    @Test
    void selectWithTimeAfterTimesOutOnTheBubbleClock() {
        AtomicInteger idx = new AtomicInteger(-1);
        synctest(() -> {
            Chan<Integer> never = Chan.make();
            idx.set(Select.select(Select.recv(never), Select.recv(Time.after(Duration.ofSeconds(30)))).index());
            assertEquals(START.plusSeconds(30), Time.now());
        });
        assertEquals(1, idx.get());
    }

    /**
     * Context.background() is shared by the whole process: its done channel belongs to no bubble,
     * even when a bubble touches it first, and waiting on it in a select with a bubble channel is
     * durable (Go: its Done is nil), so the clock still moves.
     */
    @Test
    void backgroundContextIsSharedAndItsDoneIsDurable() {
        AtomicReference<Instant> at = new AtomicReference<>();
        synctest(() -> {
            Chan<Integer> work = Chan.make();
            Go.go(() -> {
                Go.sleep(Duration.ofSeconds(5));
                work.send(1);
            });
            Select.select(Select.recv(Context.background().done()), Select.recv(work));
            at.set(Time.now());
        });
        assertEquals(START.plusSeconds(5), at.get());
        assertThat(Context.background().done().tryRecv()).isNull(); // usable outside after a bubble used it
    }

    /** The body's own exception comes out of test. */
    @Test
    void rootExceptionIsRethrown() {
        assertThatThrownBy(() -> synctest(() -> {
            throw new IllegalArgumentException("boom");
        })).isInstanceOf(IllegalArgumentException.class).hasMessage("boom");
    }

    /** Code outside any bubble is untouched: Time.now is the real clock, sleeps are real. */
    @Test
    void outsideBubblesTimeIsReal() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Instant before = Instant.now();
                assertThat(Time.now()).isBetween(before.minusSeconds(1), before.plusSeconds(60));
                assertFalse(io.gosched.runtime.Bubble.inBubble());
                return null;
            });
        }
    }
}
