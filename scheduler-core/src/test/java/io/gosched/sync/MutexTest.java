package io.gosched.sync;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.GoTesting.Mode;
import io.gosched.runtime.Select;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/mutex_test.go plus the two modes made observable. */
class MutexTest {

    /** Go: TestMutex. TryLock semantics, then 10 workers x 1000 Lock/Unlock (every 3rd a TryLock loop). */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testMutex(Mode mode) throws Exception {
        int[] counter = new int[1]; // deliberately unsynchronized: the mutex is the only guard
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        int workers = 10;
        int iters = 1000 * STRESS;
        mode.run(4, () -> {
            Mutex m = new Mutex();
            m.lock();
            assertThat(m.tryLock()).as("TryLock succeeded with mutex locked (%s)", mode).isFalse();
            m.unlock();
            assertThat(m.tryLock()).as("TryLock failed with mutex unlocked (%s)", mode).isTrue();
            m.unlock();

            Chan<Boolean> done = Chan.make(workers);
            for (int w = 0; w < workers; w++) {
                spawn(() -> {
                    for (int i = 0; i < iters; i++) {
                        if (i % 3 == 0) {
                            while (!m.tryLock()) {
                                if (Go.inGoroutine()) {
                                    Go.yield();
                                } else {
                                    Thread.onSpinWait();
                                }
                            }
                        } else {
                            m.lock();
                        }
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        counter[0]++;
                        inside.decrementAndGet();
                        m.unlock();
                    }
                    done.send(true);
                });
            }
            for (int w = 0; w < workers; w++) {
                done.recv();
            }
            assertThat(m.isLocked()).as("unlocked at the end (%s)", mode).isFalse();
            assertThat(m.waiters()).as("no waiters at the end (%s)", mode).isZero();
        });
        assertThat(overlaps.get()).as("two holders at once (%s)", mode).isZero();
        assertThat(counter[0]).as("increments under the lock (%s)", mode).isEqualTo(workers * iters);
    }

    /** Go: TestMutexMisuse (Unlock of unlocked is fatal in Go; here IllegalStateException). */
    @Test
    void testMutexMisuse() {
        Mutex m = new Mutex();
        assertThatThrownBy(m::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("unlock of unlocked mutex");
        m.lock(); // still usable after the rejected unlock
        m.unlock();
        assertThat(m.isLocked()).isFalse();
    }

    /**
     * Go: TestMutexFairness, with the modes observed: a hog re-locks at once after each unlock, so a
     * waiter woken in normal mode keeps losing; after 1 ms of waiting it switches the mutex to
     * starvation mode and gets the lock handed over; when it takes the lock as the last waiter the
     * mutex goes back to normal mode. The waiter must get the lock 10 times within 10 s (Go's
     * assertion); it keeps going (bounded) until starvation mode was entered at least once.
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testMutexFairnessEntersAndLeavesStarvationMode(Mode mode) throws Exception {
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger episodes = new AtomicInteger();
        AtomicBoolean leftWhileHolding = new AtomicBoolean();
        AtomicBoolean finalStarving = new AtomicBoolean(true);
        mode.run(2, () -> {
            Mutex mu = new Mutex();
            AtomicBoolean stop = new AtomicBoolean();
            Chan<Boolean> hogDone = Chan.make(1);
            spawn(() -> {
                while (!stop.get()) {
                    mu.lock();
                    long until = System.nanoTime() + 200_000; // hold 200 µs, busy (a sleep would let the waiter in)
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    mu.unlock();
                }
                hogDone.send(true);
            });
            Chan<Boolean> done = Chan.make(1);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            spawn(() -> {
                for (int i = 0; (i < 10 || !leftWhileHolding.get()) && System.nanoTime() < deadline; i++) {
                    GoTesting.pause(0);
                    int before = mu.starvationEpisodes();
                    mu.lock();
                    if (before > 0 && !mu.isStarving()) {
                        leftWhileHolding.set(true); // handed over in starvation mode earlier, normal again now
                    }
                    acquired.incrementAndGet();
                    mu.unlock();
                }
                done.send(true);
            });
            Chan<java.time.Instant> timeout = Chan.make(1);
            Thread timer = Thread.ofPlatform().daemon(true).start(() -> {
                try {
                    Thread.sleep(15_000);
                    timeout.trySend(java.time.Instant.now());
                } catch (InterruptedException e) {
                    // the test finished first
                }
            });
            int which = Select.select(Select.recv(done), Select.recv(timeout)).index();
            stop.set(true);
            hogDone.recv();
            timer.interrupt();
            assertThat(which).as("waiter did not finish (%s)", mode).isZero();
            episodes.set(mu.starvationEpisodes());
            finalStarving.set(mu.isStarving());
            assertThat(mu.isLocked()).as("unlocked at the end (%s)", mode).isFalse();
        });
        assertThat(acquired.get()).as("can't acquire Mutex 10 times in 10 seconds (%s)", mode).isGreaterThanOrEqualTo(10);
        assertThat(episodes.get()).as("starvation mode entered (%s)", mode).isPositive();
        assertThat(leftWhileHolding.get()).as("starvation mode left while the waiter held the lock (%s)", mode).isTrue();
        assertThat(finalStarving.get()).as("normal mode at the end (%s)", mode).isFalse();
    }

    /** Goroutines and platform threads contend for one mutex. */
    @Test
    void goroutinesAndThreadsShareAMutex() throws Exception {
        Mutex m = new Mutex();
        int[] counter = new int[1];
        int iters = 2000 * STRESS;
        Thread t = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < iters; i++) {
                m.lock();
                counter[0]++;
                m.unlock();
            }
        });
        GoTesting.runGo(2, () -> {
            Chan<Boolean> done = Chan.make(4);
            for (int g = 0; g < 4; g++) {
                Go.go(() -> {
                    for (int i = 0; i < iters; i++) {
                        m.lock();
                        counter[0]++;
                        m.unlock();
                    }
                    done.send(true);
                });
            }
            for (int g = 0; g < 4; g++) {
                done.recv();
            }
        });
        t.join();
        m.lock();
        assertThat(counter[0]).isEqualTo(5 * iters);
        m.unlock();
    }
}
