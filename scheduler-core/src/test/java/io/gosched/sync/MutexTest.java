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
     * starvation mode and gets the lock handed over; when it leaves as the last waiter the mutex
     * goes back to normal mode.
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testMutexFairnessEntersAndLeavesStarvationMode(Mode mode) throws Exception {
        AtomicBoolean sawStarving = new AtomicBoolean();
        AtomicBoolean sawNormalAgain = new AtomicBoolean();
        AtomicInteger acquired = new AtomicInteger();
        mode.run(2, () -> {
            Mutex mu = new Mutex();
            AtomicBoolean stop = new AtomicBoolean();
            Chan<Boolean> hogDone = Chan.make(1);
            spawn(() -> {
                while (!stop.get()) {
                    mu.lock();
                    long until = System.nanoTime() + 100_000; // hold 100 µs, busy (a sleep would let the waiter in)
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    if (mu.isStarving()) {
                        sawStarving.set(true);
                    } else if (sawStarving.get() && acquired.get() == 10) {
                        sawNormalAgain.set(true);
                    }
                    mu.unlock();
                }
                hogDone.send(true);
            });
            Chan<Boolean> done = Chan.make(1);
            spawn(() -> {
                for (int i = 0; i < 10; i++) {
                    GoTesting.pause(0);
                    mu.lock();
                    acquired.incrementAndGet();
                    mu.unlock();
                }
                done.send(true);
            });
            Chan<java.time.Instant> timeout = Chan.make(1);
            Thread timer = Thread.ofPlatform().daemon(true).start(() -> {
                try {
                    Thread.sleep(10_000);
                    timeout.trySend(java.time.Instant.now());
                } catch (InterruptedException e) {
                    // test finished first
                }
            });
            int which = Select.select(Select.recv(done), Select.recv(timeout)).index();
            assertThat(which).as("can't acquire Mutex in 10 seconds (%s)", mode).isZero();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!sawNormalAgain.get() && System.nanoTime() < deadline) {
                GoTesting.pause(1);
            }
            stop.set(true);
            hogDone.recv();
            timer.interrupt();
            assertThat(mu.isStarving()).as("normal mode once alone (%s)", mode).isFalse();
            assertThat(mu.isLocked()).as("unlocked at the end (%s)", mode).isFalse();
        });
        assertThat(sawStarving.get()).as("starvation mode entered (%s)", mode).isTrue();
        assertThat(sawNormalAgain.get()).as("starvation mode left (%s)", mode).isTrue();
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
