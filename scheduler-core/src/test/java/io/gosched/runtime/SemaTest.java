package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.await;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.GoTesting.Mode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** Sema: counting, FIFO wake-up order, lifo queueing, handoff, and a counting stress. */
class SemaTest {

    @Test
    void countsWithoutWaiting() {
        Sema s = new Sema(2);
        assertThat(s.tryAcquire()).isTrue();
        assertThat(s.tryAcquire()).isTrue();
        assertThat(s.tryAcquire()).isFalse();
        s.release();
        assertThat(s.available()).isEqualTo(1);
        s.acquire();
        assertThat(s.available()).isZero();
        assertThatThrownBy(() -> new Sema(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void waitersAreWokenInFifoOrderAndLifoJumpsTheQueue(Mode mode) throws Exception {
        mode.run(2, () -> {
            Sema s = new Sema(0);
            List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < 5; i++) {
                int id = i;
                spawn(() -> {
                    s.acquire();
                    order.add(id);
                });
                await("waiter " + id + " queued (" + mode + ")", () -> s.waiters() == id + 1);
            }
            spawn(() -> {
                s.acquire(true); // lifo: goes to the front
                order.add(99);
            });
            await("lifo waiter queued (" + mode + ")", () -> s.waiters() == 6);
            for (int i = 0; i < 6; i++) {
                s.release(i % 2 == 0);
                int n = i + 1;
                await("wake " + n + " (" + mode + ")", () -> order.size() == n);
            }
            assertThat(order).as("wake-up order (%s)", mode).containsExactly(99, 0, 1, 2, 3, 4);
            assertThat(s.available()).as("counts left (%s)", mode).isZero();
        });
    }

    @Test
    void handoffGivesTheCountToTheWaiterNotToANewcomer() throws Exception {
        Sema s = new Sema(0);
        AtomicInteger got = new AtomicInteger();
        Thread waiter = Thread.ofPlatform().start(() -> {
            s.acquire();
            got.incrementAndGet();
        });
        await("waiter queued", () -> s.waiters() == 1);
        s.release(true);
        // The count went to the waiter: a newcomer finds none, however fast it is.
        assertThat(s.tryAcquire()).as("newcomer after handoff").isFalse();
        waiter.join(10_000);
        assertThat(got.get()).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void countsAreConservedUnderContention(Mode mode) throws Exception {
        int workers = 8;
        int iters = 2000 * STRESS;
        int permits = 3;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        mode.run(4, () -> {
            Sema s = new Sema(permits);
            Chan<Boolean> done = Chan.make(workers);
            for (int w = 0; w < workers; w++) {
                int ww = w;
                spawn(() -> {
                    for (int i = 0; i < iters; i++) {
                        s.acquire((i + ww) % 7 == 0);
                        int now = inside.incrementAndGet();
                        maxInside.accumulateAndGet(now, Math::max);
                        if (i % 16 == 0) {
                            Go.yield();
                        }
                        inside.decrementAndGet();
                        s.release(i % 3 == 0);
                    }
                    done.send(true);
                });
            }
            for (int w = 0; w < workers; w++) {
                done.recv();
            }
            assertThat(s.available()).as("all counts returned (%s)", mode).isEqualTo(permits);
            assertThat(s.waiters()).as("no waiter left (%s)", mode).isZero();
        });
        assertThat(maxInside.get()).as("never more holders than counts (%s)", mode).isBetween(1, permits);
    }
}
