package io.gosched.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.SchedulerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ports of golang.org/x/sync/errgroup's errgroup_test.go, plus the limit's misuse errors. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails the test instead of hanging the run
class ErrGroupTest {

    static final Exception ERR1 = new Exception("errgroup_test: 1");
    static final Exception ERR2 = new Exception("errgroup_test: 2");
    static final Exception ERR_DOOM = new Exception("group_test: doomed");

    /** The table TestWithContext and TestCancelCause share: the tasks' errors and the first one. */
    record Case(List<Exception> errs, Exception want) {}

    static final List<Case> DOOM_CASES = List.of(
            new Case(List.of(), null),
            new Case(Arrays.asList((Exception) null), null),
            new Case(List.of(ERR_DOOM), ERR_DOOM),
            new Case(Arrays.asList(ERR_DOOM, null), ERR_DOOM));

    /** A task that throws err, or returns normally for null. */
    static Object result(Exception err) throws Exception {
        if (err != null) {
            throw err;
        }
        return null;
    }

    /** Go: TestZeroGroup. await returns the first error of the tasks so far. */
    @Test
    void testZeroGroup() throws Exception {
        List<List<Exception>> cases = List.of(
                List.of(),
                Arrays.asList((Exception) null),
                List.of(ERR1),
                Arrays.asList(ERR1, null),
                Arrays.asList(ERR1, null, ERR2));
        GoTesting.runGo(2, () -> {
            for (List<Exception> errs : cases) {
                ErrGroup g = new ErrGroup();
                Exception firstErr = null;
                for (int i = 0; i < errs.size(); i++) {
                    Exception err = errs.get(i);
                    g.go(() -> result(err));
                    if (firstErr == null && err != null) {
                        firstErr = err;
                    }
                    assertThat(g.await()).as("after go() for errs %s", errs.subList(0, i + 1)).isSameAs(firstErr);
                }
            }
        });
    }

    /** Go: TestWithContext. await returns the first error, and the derived context is done afterwards. */
    @Test
    void testWithContext() throws Exception {
        GoTesting.runGo(2, () -> {
            for (Case tc : DOOM_CASES) {
                ErrGroup g = ErrGroup.withContext(Context.background());
                Context ctx = g.context();
                for (Exception err : tc.errs()) {
                    g.go(() -> result(err));
                }
                assertThat(g.await()).as("await() for errs %s", tc.errs()).isSameAs(tc.want());
                assertThat(ctx.done().isClosed()).as("ctx.done() was not closed for errs %s", tc.errs()).isTrue();
            }
        });
    }

    /** The first error cancels the context at once, before await, so the other tasks can stop early. */
    @Test
    void firstErrorCancelsTheContextBeforeAwait() throws Exception {
        GoTesting.runGo(2, () -> {
            ErrGroup g = ErrGroup.withContext(Context.background());
            Context ctx = g.context();
            AtomicInteger sawCancel = new AtomicInteger();
            for (int i = 0; i < 4; i++) {
                g.go(() -> {
                    ctx.done().recv(); // a worker that runs until the group is cancelled
                    sawCancel.incrementAndGet();
                    return null;
                });
            }
            g.go(() -> result(ERR_DOOM));
            assertThat(g.await()).isSameAs(ERR_DOOM);
            assertThat(sawCancel.get()).isEqualTo(4);
            assertThat(Context.cause(ctx)).isSameAs(ERR_DOOM);
            assertThat(ctx.err()).isSameAs(Context.CANCELED);
        });
    }

    /** Go: TestTryGo. */
    @Test
    void testTryGo() throws Exception {
        GoTesting.runGo(2, () -> {
            ErrGroup g = new ErrGroup();
            int n = 42;
            g.setLimit(42);
            Chan<Boolean> ch = Chan.make();
            java.util.concurrent.Callable<Object> fn = () -> {
                ch.send(true);
                return null;
            };
            for (int i = 0; i < n; i++) {
                assertThat(g.tryGo(fn)).as("TryGo should succeed but got fail at %d-th call", i).isTrue();
            }
            assertThat(g.tryGo(fn)).as("TryGo is expected to fail but succeeded").isFalse();
            Go.go(() -> {
                for (int i = 0; i < n; i++) {
                    ch.recv();
                }
            });
            g.await();

            assertThat(g.tryGo(fn)).as("TryGo should succeed after all goroutines").isTrue();
            Go.go(ch::recv);
            g.await();

            // Switch limit.
            g.setLimit(1);
            assertThat(g.tryGo(fn)).as("TryGo should succeed").isTrue();
            assertThat(g.tryGo(fn)).as("TryGo should fail").isFalse();
            Go.go(ch::recv);
            g.await();

            // Block all calls.
            g.setLimit(0);
            for (int i = 0; i < 1 << 10; i++) {
                assertThat(g.tryGo(fn)).as("TryGo should fail with limit 0").isFalse();
            }
            g.await();
        });
    }

    /** Go: TestGoLimit. No more than the limit run at once. */
    @Test
    void testGoLimit() throws Exception {
        int limit = 10;
        GoTesting.runGo(4, () -> {
            ErrGroup g = new ErrGroup();
            g.setLimit(limit);
            AtomicInteger active = new AtomicInteger();
            AtomicInteger maxActive = new AtomicInteger();
            for (int i = 0; i <= 1 << 10; i++) {
                g.go(() -> {
                    int n = active.incrementAndGet();
                    maxActive.accumulateAndGet(n, Math::max);
                    if (n > limit) {
                        throw new Exception("saw " + n + " active goroutines; want <= " + limit);
                    }
                    Go.sleep(Duration.ofNanos(1000)); // give other goroutines a chance to increment active
                    active.decrementAndGet();
                    return null;
                });
            }
            assertThat(g.await()).isNull();
            assertThat(maxActive.get()).isBetween(1, limit);
        });
    }

    /** Go: TestCancelCause. The context's cause is the first error, or CANCELED when there was none. */
    @Test
    void testCancelCause() throws Exception {
        GoTesting.runGo(2, () -> {
            for (Case tc : DOOM_CASES) {
                ErrGroup g = ErrGroup.withContext(Context.background());
                for (Exception err : tc.errs()) {
                    g.tryGo(() -> result(err));
                }
                assertThat(g.await()).as("await() for errs %s", tc.errs()).isSameAs(tc.want());
                Throwable want = tc.want() == null ? Context.CANCELED : tc.want();
                assertThat(Context.cause(g.context())).as("cause for errs %s", tc.errs()).isSameAs(want);
            }
        });
    }

    /** Go: the panic of SetLimit while goroutines are active. */
    @Test
    void setLimitWhileActiveFails() throws Exception {
        GoTesting.runGo(2, () -> {
            ErrGroup g = new ErrGroup();
            g.setLimit(2);
            Chan<Boolean> release = Chan.make();
            g.go(() -> release.recv());
            assertThatThrownBy(() -> g.setLimit(3))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("errgroup: modify limit while 1 goroutines in the group are still active");
            release.send(true);
            assertThat(g.await()).isNull();
            g.setLimit(3); // fine once the group is idle
            g.setLimit(-1);
        });
    }

    /** An Error (Go: a panic) counts as the group's error too: await never reports success for a dead task. */
    @Test
    void anErrorIsReportedByAwaitAndToTheRuntime() throws Exception {
        ConcurrentLinkedQueue<Throwable> uncaught = new ConcurrentLinkedQueue<>();
        AssertionError boom = new AssertionError("boom");
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2)
                .onUncaughtException((thread, t) -> uncaught.add(t)).build())) {
            Throwable got = rt.run(() -> {
                ErrGroup g = ErrGroup.withContext(Context.background());
                g.go(() -> {
                    throw boom;
                });
                return g.await();
            });
            assertThat(got).isSameAs(boom);
            GoTesting.await("the runtime saw the error", () -> uncaught.contains(boom));
        }
    }

    /**
     * x/sync/errgroup: a task that ends by runtime.Goexit never reaches the error check, so it is
     * no failure. await() returns null, and the group's context is cancelled only by await, with
     * no cause of the task's. With a limit of 1 the sibling starts only once the Goexit task's
     * goroutine has given its place back, i.e. after the group has handled its end; on 2 Ps with
     * a randomized scheduler, repeated.
     */
    @Test
    void errGroupGoexitIsNoFailureAndCancelsNoSibling() throws Exception {
        GoTesting.runGo(2, () -> {
            for (int round = 0; round < 200 * GoTesting.STRESS; round++) {
                ErrGroup g = ErrGroup.withContext(Context.background());
                g.setLimit(1);
                AtomicInteger after = new AtomicInteger();
                g.go(() -> {
                    try {
                        Go.goexit();
                    } finally {
                        after.incrementAndGet(); // Go's deferred calls still run
                    }
                    return null;
                });
                Context ctx = g.context();
                List<Throwable> siblingSaw = new ArrayList<>();
                g.go(() -> { // waits for the first task's place: it has ended
                    siblingSaw.add(ctx.err());
                    siblingSaw.add(Context.cause(ctx));
                    return null;
                });
                assertThat(g.await()).as("round %d: await() after a task's Goexit", round).isNull();
                assertThat(siblingSaw).as("round %d: the sibling's context's err and cause", round)
                        .containsExactly(null, null);
                assertThat(after.get()).isEqualTo(1);
                assertThat(Context.cause(ctx)).as("round %d: cancelled by await alone", round).isSameAs(Context.CANCELED);
            }
            ErrGroup zero = new ErrGroup();
            zero.go(() -> {
                Go.goexit();
                return null;
            });
            assertThat(zero.await()).as("a zero group after a Goexit").isNull();
        });
    }

    /** go() starts goroutines: from a platform thread it says so instead of failing obscurely. */
    @Test
    void goOutsideAGoroutineIsRefused() {
        ErrGroup g = new ErrGroup();
        assertThatThrownBy(() -> g.go(() -> null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("outside a goroutine");
        assertThat(g.await()).isNull();
    }

    /** Many tasks, a few failing at random points: exactly one of the failures is reported, and all tasks ran. */
    @Test
    void stressOneFirstError() throws Exception {
        GoTesting.runGo(4, () -> {
            for (int round = 0; round < 50 * GoTesting.STRESS; round++) {
                ErrGroup g = ErrGroup.withContext(Context.background());
                List<Exception> failures = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    failures.add(new Exception("fail " + i));
                }
                AtomicInteger ran = new AtomicInteger();
                for (int i = 0; i < 100; i++) {
                    int k = i;
                    g.go(() -> {
                        ran.incrementAndGet();
                        if (k % 20 == 7) {
                            throw failures.get(k / 20);
                        }
                        if (k % 3 == 0) {
                            Go.yield();
                        }
                        return null;
                    });
                }
                Throwable e = g.await();
                assertThat(failures).contains((Exception) e);
                assertThat(ran.get()).isEqualTo(100);
                assertThat(Context.cause(g.context())).isSameAs(e);
            }
        });
    }
}
