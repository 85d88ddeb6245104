package io.gosched.sync;

import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.gosched.context.CancelContext;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.GoTesting.Mode;
import io.gosched.runtime.Select;
import io.gosched.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of golang.org/x/sync/semaphore's semaphore_test.go, plus the FIFO rule and misuse errors. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails the test instead of hanging the run
class SemaphoreTest {

    static final long MAX_SLEEP_NANOS = 1_000_000;

    /** Go: HammerWeighted. */
    static void hammerWeighted(Semaphore sem, long n, int loops) {
        for (int i = 0; i < loops; i++) {
            sem.acquire(Context.background(), n);
            Go.sleep(Duration.ofNanos(ThreadLocalRandom.current().nextLong(MAX_SLEEP_NANOS)));
            sem.release(n);
        }
    }

    /** Go: TestWeighted. n goroutines acquire weights 0..n-1 of a semaphore of size n, over and over. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testWeighted(Mode mode) throws Exception {
        int n = 4;
        int loops = (mode == Mode.GOROUTINES ? 2000 : 500) * GoTesting.STRESS / n;
        mode.run(n, () -> {
            Semaphore sem = new Semaphore(n);
            WaitGroup wg = new WaitGroup();
            wg.add(n);
            for (int i = 0; i < n; i++) {
                long w = i;
                spawn(() -> {
                    hammerWeighted(sem, w, loops);
                    wg.done();
                });
            }
            wg.await();
            assertThat(sem.held()).isZero();
            assertThat(sem.waiters()).isZero();
        });
    }

    /** Go: TestWeightedPanic. Releasing what is not held is the caller's bug. */
    @Test
    void testWeightedPanic() {
        Semaphore w = new Semaphore(1);
        assertThatThrownBy(() -> w.release(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("semaphore: released more than held");
        assertThat(w.tryAcquire(1)).as("a failed release leaves the semaphore unchanged").isTrue();
    }

    /**
     * The sequence TestWeightedTryAcquire and TestWeightedAcquire share, on a semaphore of size
     * 2: hold 1, try 1 twice (true, false), release 2, try 1 (true), hold 1, try 1 (false).
     */
    static List<Boolean> tries(Semaphore sem, LongPredicate tryAcquire) {
        Context ctx = Context.background();
        List<Boolean> tries = new ArrayList<>();
        sem.acquire(ctx, 1);
        tries.add(tryAcquire.test(1));
        tries.add(tryAcquire.test(1));
        sem.release(2);
        tries.add(tryAcquire.test(1));
        sem.acquire(ctx, 1);
        tries.add(tryAcquire.test(1));
        return tries;
    }

    /** Go: TestWeightedTryAcquire. */
    @Test
    void testWeightedTryAcquire() {
        Semaphore sem = new Semaphore(2);
        assertThat(tries(sem, sem::tryAcquire)).containsExactly(true, false, true, false);
    }

    /** Go: TestWeightedAcquire. An acquire that would wait gives up with its context's deadline. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testWeightedAcquire(Mode mode) throws Exception {
        mode.run(2, () -> {
            Context ctx = Context.background();
            Semaphore sem = new Semaphore(2);
            LongPredicate tryAcquire = n -> {
                CancelContext c = Context.withTimeout(ctx, Duration.ofMillis(10));
                try {
                    sem.acquire(c, n);
                    return true;
                } catch (RuntimeException e) {
                    assertThat(e).isSameAs(Context.DEADLINE_EXCEEDED);
                    return false;
                } finally {
                    c.cancel();
                }
            };
            assertThat(tries(sem, tryAcquire)).as("%s", mode).containsExactly(true, false, true, false);
            assertThat(sem.waiters()).as("a timed-out acquire leaves the queue").isZero();
        });
    }

    /** Go: TestWeightedDoesntBlockIfTooBig. A request larger than the size does not hold up the others. */
    @Test
    void testWeightedDoesntBlockIfTooBig() throws Exception {
        GoTesting.runGo(2, () -> {
            long n = 2;
            Semaphore sem = new Semaphore(n);
            CancelContext big = Context.withCancel(Context.background());
            Go.go(() -> catchThrowable(() -> sem.acquire(big, n + 1)));
            ErrGroup g = ErrGroup.withContext(Context.background());
            Context ctx = g.context();
            for (long i = n * 3; i > 0; i--) {
                g.go(() -> {
                    sem.acquire(ctx, 1);
                    Go.sleep(Duration.ofMillis(1));
                    sem.release(1);
                    return null;
                });
            }
            assertThat(g.await()).as("Semaphore(%d) failed to acquire(_, 1) with acquire(_, %d) pending", n, n + 1).isNull();
            big.cancel();
        });
    }

    /** Go: TestLargeAcquireDoesntStarve. Returning at all is the success. */
    @Test
    void testLargeAcquireDoesntStarve() throws Exception {
        GoTesting.runGo(4, () -> {
            Context ctx = Context.background();
            long n = 4;
            Semaphore sem = new Semaphore(n);
            boolean[] running = {true};
            WaitGroup wg = new WaitGroup();
            wg.add((int) n);
            for (long i = n; i > 0; i--) {
                sem.acquire(ctx, 1);
                Go.go(() -> {
                    try {
                        while (running[0]) {
                            Go.sleep(Duration.ofMillis(1));
                            sem.release(1);
                            sem.acquire(ctx, 1);
                        }
                    } finally {
                        sem.release(1);
                        wg.done();
                    }
                });
            }
            sem.acquire(ctx, n);
            running[0] = false;
            sem.release(n);
            wg.await();
        });
    }

    /** Go: TestAllocCancelDoesntStarve. A cancelled big request at the head lets the small ones behind it in. */
    @Test
    void testAllocCancelDoesntStarve() throws Exception {
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        GoTesting.runGo(2, () -> {
            Semaphore sem = new Semaphore(10);
            // Hold 1 read lock.
            sem.acquire(Context.background(), 1);
            Go.go(() -> {
                CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofMillis(300));
                try {
                    // A write lock request that gives up after 300 ms.
                    sem.acquire(ctx, 10);
                    errors.add("the write lock was acquired");
                } catch (RuntimeException e) {
                    // expected
                } finally {
                    ctx.cancel();
                }
            });
            // Long enough for the write request to queue.
            GoTesting.await("the write request queues", () -> sem.waiters() == 1);
            Chan<Boolean> doneCh = Chan.make();
            Go.go(() -> {
                // Queued behind the write request, admitted when it is cancelled.
                sem.acquire(Context.background(), 1);
                sem.release(1);
                doneCh.close();
            });
            int got = Select.select(Select.recv(doneCh), Select.recv(Time.after(Duration.ofSeconds(10)))).index();
            assertThat(got).as("the read lock behind the cancelled write request was admitted").isZero();
        });
        assertThat(errors).isEmpty();
    }

    /**
     * Go: TestWeightedAcquireCanceled (go.dev/issue/63615). A context cancelled before enough
     * weight is free makes the acquire fail even if the weight is released right after, and an
     * already-done context fails an acquire that would not have to wait.
     */
    @Test
    void testWeightedAcquireCanceled() throws Exception {
        GoTesting.runGo(2, () -> {
            Semaphore sem = new Semaphore(2);
            CancelContext ctx = Context.withCancel(Context.background());
            sem.acquire(Context.background(), 1);
            Chan<Boolean> ch = Chan.make();
            Go.go(() -> {
                // Synchronize with the acquire(2) below.
                while (sem.tryAcquire(1)) {
                    sem.release(1);
                    Go.yield();
                }
                // Now cancel ctx, and then release the weight.
                ctx.cancel();
                sem.release(1);
                ch.close();
            });
            // The cancellation happens before enough weight is free: this acquire must fail.
            assertThat(catchThrowable(() -> sem.acquire(ctx, 2))).isSameAs(Context.CANCELED);
            // After the other goroutine released the 1 we held, the whole 2 must be free.
            ch.recv();
            assertThat(sem.tryAcquire(2)).as("tryAcquire after a cancelled acquire").isTrue();
            // And a done context never acquires, even when it would not have to wait.
            sem.release(2);
            assertThat(catchThrowable(() -> sem.acquire(ctx, 1))).isSameAs(Context.CANCELED);
            assertThat(sem.held()).isZero();
        });
    }

    /** FIFO: a large request at the head blocks a smaller one behind it that would fit. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void aBigRequestAtTheHeadBlocksSmallerOnes(Mode mode) throws Exception {
        mode.run(2, () -> {
            Semaphore sem = new Semaphore(4);
            sem.acquire(Context.background(), 2);
            Chan<String> order = Chan.make(2);
            spawn(() -> {
                sem.acquire(Context.background(), 4);
                order.send("big");
                sem.release(4);
            });
            GoTesting.await("the big request queues", () -> sem.waiters() == 1);
            assertThat(sem.tryAcquire(1)).as("tryAcquire while someone waits").isFalse();
            spawn(() -> {
                sem.acquire(Context.background(), 1);
                order.send("small");
                sem.release(1);
            });
            GoTesting.await("the small request queues behind it", () -> sem.waiters() == 2);
            GoTesting.pause(20);
            assertThat(order.tryRecv()).as("the small request overtook the big one (%s)", mode).isNull();
            sem.release(2);
            assertThat(order.recv()).isEqualTo("big");
            assertThat(order.recv()).isEqualTo("small");
        });
    }

    /** Bad weights name what is wrong. */
    @Test
    void negativeWeightsAreRejected() {
        assertThatThrownBy(() -> new Semaphore(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        Semaphore sem = new Semaphore(1);
        assertThatThrownBy(() -> sem.acquire(Context.background(), -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sem.tryAcquire(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sem.release(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Stress: random weights, random cancellations. Whatever gives up leaves nothing behind: at
     * the end all weight is free and nobody waits; the weight held never exceeds the size.
     */
    @Test
    void stressCancellationsLeaveNothingBehind() throws Exception {
        long size = 8;
        AtomicLong inUse = new AtomicLong();
        AtomicLong maxInUse = new AtomicLong();
        GoTesting.runGo(4, () -> {
            Semaphore sem = new Semaphore(size);
            WaitGroup wg = new WaitGroup();
            int workers = 32;
            wg.add(workers);
            for (int w = 0; w < workers; w++) {
                Go.go(() -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    for (int i = 0; i < 200 * GoTesting.STRESS; i++) {
                        long n = 1 + r.nextLong(size);
                        CancelContext ctx = Context.withTimeout(Context.background(), Duration.ofNanos(r.nextLong(2_000_000)));
                        try {
                            sem.acquire(ctx, n);
                        } catch (RuntimeException e) {
                            ctx.cancel();
                            continue;
                        }
                        long now = inUse.addAndGet(n);
                        maxInUse.accumulateAndGet(now, Math::max);
                        if (r.nextBoolean()) {
                            Go.yield();
                        }
                        inUse.addAndGet(-n);
                        sem.release(n);
                        ctx.cancel();
                    }
                    wg.done();
                });
            }
            wg.await();
            assertThat(sem.held()).isZero();
            assertThat(sem.waiters()).isZero();
            assertThat(sem.tryAcquire(size)).isTrue();
        });
        assertThat(maxInUse.get()).isBetween(1L, size);
    }
}
