package io.gosched.sync;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.pause;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.GoTesting.Mode;
import io.gosched.runtime.Select;
import io.gosched.testing.Synctest;
import io.gosched.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/cond_test.go, plus the notify list's ticket rule and a no-lost-wake-up stress. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails the test instead of hanging the run
class CondTest {

    /** Go: TestCondSignal. Each signal wakes exactly one of the waiters. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testCondSignal(Mode mode) throws Exception {
        mode.run(2, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            int n = 2;
            Chan<Boolean> running = Chan.make(n);
            Chan<Boolean> awake = Chan.make(n);
            for (int i = 0; i < n; i++) {
                spawn(() -> {
                    m.lock();
                    running.send(true);
                    c.await();
                    awake.send(true);
                    m.unlock();
                });
            }
            for (int i = 0; i < n; i++) {
                running.recv(); // wait for everyone to run
            }
            while (n > 0) {
                assertThat(awake.tryRecv()).as("goroutine not asleep (%s)", mode).isNull();
                m.lock();
                c.signal();
                m.unlock();
                awake.recv(); // deadlocks if no goroutine wakes up
                assertThat(awake.tryRecv()).as("too many goroutines awake (%s)", mode).isNull();
                n--;
            }
            c.signal();
        });
    }

    /** Go: TestCondSignalGenerations. Signals wake waiters in the order they started waiting. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testCondSignalGenerations(Mode mode) throws Exception {
        mode.run(2, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            int n = 100;
            Chan<Boolean> running = Chan.make(n);
            Chan<Integer> awake = Chan.make(n);
            for (int i = 0; i < n; i++) {
                int id = i;
                spawn(() -> {
                    m.lock();
                    running.send(true);
                    c.await();
                    awake.send(id);
                    m.unlock();
                });
                if (i > 0) {
                    int a = awake.recv();
                    assertThat(a).as("wrong goroutine woke up (%s)", mode).isEqualTo(i - 1);
                }
                running.recv();
                m.lock();
                c.signal();
                m.unlock();
            }
        });
    }

    /** Go: TestCondBroadcast. Every broadcast wakes all n waiters, each once. */
    @Test
    void testCondBroadcast() throws Exception {
        GoTesting.runGo(2, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            int n = 200;
            Chan<Integer> running = Chan.make(n);
            Chan<Integer> awake = Chan.make(n);
            boolean[] exit = {false};
            for (int i = 0; i < n; i++) {
                int g = i;
                Go.go(() -> {
                    m.lock();
                    while (!exit[0]) {
                        running.send(g);
                        c.await();
                        awake.send(g);
                    }
                    m.unlock();
                });
            }
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < n; k++) {
                    running.recv(); // deadlocks unless n are running
                }
                if (i == n - 1) {
                    m.lock();
                    exit[0] = true;
                    m.unlock();
                }
                assertThat(awake.tryRecv()).as("goroutine not asleep").isNull();
                m.lock();
                c.broadcast();
                m.unlock();
                boolean[] seen = new boolean[n];
                for (int k = 0; k < n; k++) {
                    int g = awake.recv();
                    assertThat(seen[g]).as("goroutine woke up twice").isFalse();
                    seen[g] = true;
                }
            }
            assertThat(running.tryRecv()).as("goroutine did not exit").isNull();
            c.broadcast();
        });
    }

    /** Go: TestRace. Three goroutines hand a value around under the Cond's mutex. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testRace(Mode mode) throws Exception {
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        mode.run(2, () -> {
            Mutex l = new Mutex();
            Cond c = new Cond(l);
            int[] x = {0};
            Chan<Boolean> done = Chan.make();
            spawn(() -> {
                l.lock();
                x[0] = 1;
                c.await();
                if (x[0] != 2) {
                    errors.add("want 2, got " + x[0]);
                }
                x[0] = 3;
                c.signal();
                l.unlock();
                done.send(true);
            });
            spawn(() -> {
                l.lock();
                for (;;) {
                    if (x[0] == 1) {
                        x[0] = 2;
                        c.signal();
                        break;
                    }
                    l.unlock();
                    Go.yield();
                    l.lock();
                }
                l.unlock();
                done.send(true);
            });
            spawn(() -> {
                l.lock();
                for (;;) {
                    if (x[0] == 2) {
                        c.await();
                        if (x[0] != 3) {
                            errors.add("want 3, got " + x[0]);
                        }
                        break;
                    }
                    if (x[0] == 3) {
                        break;
                    }
                    l.unlock();
                    Go.yield();
                    l.lock();
                }
                l.unlock();
                done.send(true);
            });
            done.recv();
            done.recv();
            done.recv();
        });
        assertThat(errors).as("%s", mode).isEmpty();
    }

    /**
     * Go: TestCondSignalStealing. A broadcast racing with a new waiter may or may not wake the
     * newcomer, but must wake the waiter that was already waiting.
     */
    @Test
    void testCondSignalStealing() throws Exception {
        GoTesting.runGo(2, () -> {
            for (int iters = 0; iters < 1000; iters++) {
                Mutex m = new Mutex();
                Cond cond = new Cond(m);
                // Start a waiter.
                Chan<Boolean> ch = Chan.make();
                Go.go(() -> {
                    m.lock();
                    ch.send(true);
                    cond.await();
                    m.unlock();
                    ch.send(true);
                });
                ch.recv();
                m.lock();
                m.unlock();
                // The waiter is in await(): we synchronized with it, then took and released the
                // mutex it held. Now race a broadcast with a second waiter.
                boolean[] done = {false};
                Go.go(cond::broadcast);
                Go.go(() -> {
                    m.lock();
                    while (!done[0]) {
                        cond.await();
                    }
                    m.unlock();
                });
                // The first waiter must be woken.
                int got = Select.select(Select.recv(ch), Select.recv(Time.after(Duration.ofSeconds(10)))).index();
                assertThat(got).as("first waiter didn't get the broadcast (iteration %d)", iters).isZero();
                // Release the second waiter in case it didn't get the broadcast.
                m.lock();
                done[0] = true;
                m.unlock();
                cond.broadcast();
            }
        });
    }

    /**
     * Signal wakes the longest waiter: with n goroutines waiting, n signals wake them in the order
     * they started waiting (the order they took the mutex to call await).
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void signalWakesTheLongestWaiter(Mode mode) throws Exception {
        mode.run(4, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            int n = mode == Mode.GOROUTINES ? 50 : 10;
            List<Integer> waitOrder = new ArrayList<>();
            Chan<Integer> awake = Chan.make(n);
            for (int i = 0; i < n; i++) {
                int id = i;
                spawn(() -> {
                    m.lock();
                    waitOrder.add(id); // under the mutex: the order of the tickets
                    c.await();
                    m.unlock();
                    awake.send(id);
                });
            }
            GoTesting.await("all wait", () -> c.waiting() == n);
            List<Integer> wakeOrder = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                c.signal();
                wakeOrder.add(awake.recv());
            }
            m.lock();
            assertThat(wakeOrder).as("wake order vs wait order (%s)", mode).isEqualTo(waitOrder);
            m.unlock();
        });
    }

    /**
     * The notify list's rule: a signal with nobody waiting is not kept for a later wait (unlike a
     * semaphore), and a signal wakes only waits that started before it.
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void signalIsNotKeptForALaterWait(Mode mode) throws Exception {
        mode.run(2, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            c.signal();
            c.broadcast();
            Chan<Boolean> awake = Chan.make(1);
            spawn(() -> {
                m.lock();
                c.await();
                awake.send(true);
                m.unlock();
            });
            GoTesting.await("the waiter waits", () -> c.waiting() == 1);
            pause(50);
            assertThat(awake.tryRecv()).as("woken by a signal sent before it waited (%s)", mode).isNull();
            m.lock();
            c.signal();
            m.unlock();
            awake.recv();
            assertThat(c.waiting()).isZero();
        });
    }

    /**
     * The ticket decides, not the moment of parking: a wait whose ticket was taken before a
     * signal is woken by it even if it parks only after the signal ran (the window between
     * await's unlock and its park), and a ticket taken after the signal is not. Drives the
     * notify list's two steps (Go's notifyListAdd, notifyListWait) directly to hit that window.
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void aTicketTakenBeforeTheSignalIsWokenEvenIfItParksAfter(Mode mode) throws Exception {
        mode.run(2, () -> {
            Cond c = new Cond(new Mutex());
            int early = c.notifyListAdd();
            c.signal();
            int late = c.notifyListAdd();
            c.notifyListWait(early); // returns at once: parking here would never end
            Chan<Boolean> lateWoke = Chan.make(1);
            spawn(() -> {
                c.notifyListWait(late);
                lateWoke.send(true);
            });
            pause(50);
            assertThat(lateWoke.tryRecv()).as("a ticket taken after the signal was woken by it (%s)", mode).isNull();
            c.broadcast();
            lateWoke.recv();
        });
    }

    /** Await without holding the mutex is the caller's bug, reported by the mutex. */
    @Test
    void awaitWithoutTheLockFails() {
        Cond c = new Cond(new Mutex());
        assertThatThrownBy(c::await).isInstanceOf(IllegalStateException.class).hasMessageContaining("unlock of unlocked mutex");
    }

    /**
     * An await by a goroutine that does not hold the mutex fails (Go: a fatal "unlock of unlocked
     * mutex"), and here, where the failure can be caught, it must leave no ticket of the notify
     * list behind: otherwise a later signal is spent on that ticket and a real waiter sleeps on.
     * Each failing await races with a signal on 2 Ps, so a signal may also land on a ticket between
     * its taking and the failed unlock; that signal must reach a waiter of its time, not vanish.
     * In a synctest bubble, so a waiter that sleeps on is a proven deadlock, not a timeout.
     */
    @Test
    void condAwaitWithoutTheMutexLeavesNoTicketBehind() throws Exception {
        GoTesting.runGo(2, () -> {
            for (int round = 0; round < 200 * STRESS; round++) {
                int r = round;
                Synctest.test(() -> {
                    Mutex m = new Mutex();
                    Cond c = new Cond(m);
                    int misusers = 3;
                    WaitGroup misuse = new WaitGroup();
                    AtomicInteger refused = new AtomicInteger();
                    // One misuser at a time: two goroutines unlocking the same unlocked mutex at
                    // once is Go's fatal error, after which the mutex's state means nothing (its
                    // unlock cannot tell the second one's bit from a holder's). Each races with a
                    // signal, and the tickets they leave pile up across the three.
                    for (int i = 0; i < misusers; i++) {
                        misuse.go(() -> {
                            try {
                                c.await();
                            } catch (IllegalStateException e) {
                                refused.incrementAndGet();
                            }
                        });
                        if (i < 2) {
                            misuse.go(c::signal); // no real waiter yet: such a signal is spent on nobody
                        }
                        misuse.await();
                    }
                    assertThat(refused.get()).as("round %d: awaits refused", r).isEqualTo(misusers);

                    int[] granted = {0};
                    WaitGroup waiters = new WaitGroup();
                    for (int k = 0; k < 2; k++) {
                        waiters.go(() -> {
                            m.lock();
                            while (granted[0] == 0) {
                                c.await();
                            }
                            granted[0]--;
                            m.unlock();
                        });
                    }
                    Synctest.await(); // both are parked in the Cond
                    for (int k = 0; k < 2; k++) {
                        m.lock();
                        granted[0]++;
                        m.unlock();
                        c.signal();
                    }
                    waiters.await(); // a signal spent on a left-behind ticket: a bubble deadlock
                });
            }
        });
    }

    /**
     * The rare order the racing test above can hardly produce, step by step: a failing await has
     * taken its ticket, a signal lands on that ticket before the unlock fails (the signal finds no
     * wait in the list and takes it for one about to park), and only then is the ticket withdrawn.
     * The signal must go on to a wait whose ticket was taken before it, and never to one that
     * began after it (Go's rule: a signal wakes no later wait).
     */
    @Test
    void condSignalSpentOnAFailedAwaitGoesOnToAnEarlierWaitOnly() throws Exception {
        GoTesting.runGo(2, () -> Synctest.test(() -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            // A wait that began before the signal gets it.
            int failed = c.notifyListAdd(); // a failing await's ticket, not yet withdrawn
            boolean[] woke = {false, false};
            WaitGroup wg = new WaitGroup();
            wg.go(() -> {
                m.lock();
                c.await();
                woke[0] = true;
                m.unlock();
            });
            Synctest.await(); // the wait is parked, its ticket after the failed one
            c.signal(); // lands on the failed ticket: no wait in the list holds it
            assertThat(woke[0]).isFalse();
            c.notifyListCancel(failed);
            wg.await(); // the signal went on to the parked wait (else: a bubble deadlock)
            assertThat(c.waiting()).isZero();

            // A wait that began after the signal does not.
            int failedAgain = c.notifyListAdd();
            c.signal(); // lands on failedAgain; the next ticket is not taken yet
            wg.go(() -> {
                m.lock();
                c.await();
                woke[1] = true;
                m.unlock();
            });
            Synctest.await();
            c.notifyListCancel(failedAgain);
            Synctest.await();
            assertThat(woke[1]).as("a wait that began after the signal was woken by it").isFalse();
            c.signal();
            wg.await();
            assertThat(woke[1]).isTrue();
        }));
    }

    /**
     * Go's benchmarkCond as a stress test: waiters+1 goroutines meet in rounds, the last one of
     * each round broadcasting. A lost wake-up deadlocks it (caught by the timeout). Random
     * pauses shuffle who arrives last.
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void broadcastRoundsLoseNoWakeUp(Mode mode) throws Exception {
        int waiters = mode == Mode.GOROUTINES ? 32 : 8;
        int rounds = 300 * STRESS;
        int[] completed = new int[1];
        mode.run(4, () -> {
            Mutex l = new Mutex();
            Cond c = new Cond(l);
            int[] id = {0};
            Chan<Boolean> done = Chan.make();
            for (int r = 0; r < waiters + 1; r++) {
                spawn(() -> {
                    for (int i = 0; i < rounds; i++) {
                        if (ThreadLocalRandom.current().nextInt(16) == 0) {
                            Go.yield();
                        }
                        l.lock();
                        if (id[0] == -1) {
                            l.unlock();
                            break;
                        }
                        id[0]++;
                        if (id[0] == waiters + 1) {
                            id[0] = 0;
                            completed[0]++;
                            c.broadcast();
                        } else {
                            c.await();
                        }
                        l.unlock();
                    }
                    l.lock();
                    id[0] = -1;
                    c.broadcast();
                    l.unlock();
                    done.send(true);
                });
            }
            for (int r = 0; r < waiters + 1; r++) {
                done.recv();
            }
        });
        assertThat(completed[0]).as("rounds completed (%s)", mode).isGreaterThan(0).isLessThanOrEqualTo(rounds);
    }

    /** Signals spread over many waiters: every signal wakes one waiter, none is lost or doubled. */
    @Test
    void manySignalsWakeExactlyAsManyWaiters() throws Exception {
        GoTesting.runGo(4, () -> {
            Mutex m = new Mutex();
            Cond c = new Cond(m);
            int n = 500;
            int[] tickets = {0};
            Chan<Integer> woke = Chan.make(n);
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Go.go(() -> {
                    m.lock();
                    while (tickets[0] == 0) {
                        c.await();
                    }
                    tickets[0]--;
                    m.unlock();
                    woke.send(1);
                });
            }
            for (int i = 0; i < n; i++) {
                m.lock();
                tickets[0]++;
                c.signal();
                m.unlock();
                if (i % 7 == 0) {
                    Go.yield();
                }
            }
            for (int i = 0; i < n; i++) {
                order.add(woke.recv());
            }
            assertThat(order).hasSize(n);
            assertThat(tickets[0]).isZero();
        });
    }
}
