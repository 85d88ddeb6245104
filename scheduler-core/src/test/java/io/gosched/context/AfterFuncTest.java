package io.gosched.context;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.Select;
import io.gosched.time.Time;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ports of Go's context AfterFunc tests (x_test.go), plus where f runs and the stop race. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails the test instead of hanging the run
class AfterFuncTest {

    static final Duration SHORT = Duration.ofMillis(20);
    static final Duration VERY_LONG = Duration.ofSeconds(20);

    /** True if ch delivers (or closes) within d. */
    static boolean within(Chan<?> ch, Duration d) {
        return Select.select(Select.recv(ch), Select.recv(Time.after(d))).index() == 0;
    }

    /** Go: TestAfterFuncCalledAfterCancel. */
    @Test
    void testAfterFuncCalledAfterCancel() throws Exception {
        GoTesting.runGo(2, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Chan<Object> donec = Chan.make();
            BooleanSupplier stop = Context.afterFunc(ctx, donec::close);
            assertThat(within(donec, SHORT)).as("AfterFunc called before context is done").isFalse();
            ctx.cancel();
            assertThat(within(donec, VERY_LONG)).as("AfterFunc not called after context is canceled").isTrue();
            assertThat(stop.getAsBoolean()).as("stop() after f ran").isFalse();
        });
    }

    /** Go: TestAfterFuncCalledAfterTimeout. */
    @Test
    void testAfterFuncCalledAfterTimeout() throws Exception {
        GoTesting.runGo(2, () -> {
            CancelContext ctx = Context.withTimeout(Context.background(), SHORT);
            Chan<Object> donec = Chan.make();
            Context.afterFunc(ctx, donec::close);
            assertThat(within(donec, VERY_LONG)).as("AfterFunc not called after the timeout").isTrue();
            ctx.cancel();
        });
    }

    /** Go: TestAfterFuncCalledImmediately. */
    @Test
    void testAfterFuncCalledImmediately() throws Exception {
        GoTesting.runGo(2, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            ctx.cancel();
            Chan<Object> donec = Chan.make();
            Context.afterFunc(ctx, donec::close);
            assertThat(within(donec, VERY_LONG)).as("AfterFunc not called for an already-canceled context").isTrue();
        });
    }

    /** Go: TestAfterFuncNotCalledAfterStop. */
    @Test
    void testAfterFuncNotCalledAfterStop() throws Exception {
        GoTesting.runGo(2, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Chan<Object> donec = Chan.make();
            BooleanSupplier stop = Context.afterFunc(ctx, donec::close);
            assertThat(stop.getAsBoolean()).as("stop() before the cancel").isTrue();
            assertThat(((CancelCtx) ctx).childCount()).as("stop() unlinks from the context").isZero();
            ctx.cancel();
            assertThat(within(donec, SHORT)).as("AfterFunc called after stop").isFalse();
            assertThat(stop.getAsBoolean()).as("a second stop()").isFalse();
        });
    }

    /** Go: TestAfterFuncCalledAsynchronously. The cancel does not wait for f. */
    @Test
    void testAfterFuncCalledAsynchronously() throws Exception {
        GoTesting.runGo(2, () -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Chan<Object> donec = Chan.make();
            BooleanSupplier stop = Context.afterFunc(ctx, () -> donec.send(true)); // blocks until read
            ctx.cancel();
            // cancel() returned although f is blocked in its send.
            assertThat(within(donec, VERY_LONG)).as("AfterFunc not called after context is canceled").isTrue();
            stop.getAsBoolean();
        });
    }

    /** f runs in a goroutine of the runtime that registered it, also when a platform thread cancels. */
    @Test
    void fRunsAsAGoroutineOfTheRegisteringRuntime() throws Exception {
        AtomicLong goid = new AtomicLong();
        CancelContext ctx = Context.withCancel(Context.background());
        GoTesting.runGo(2, () -> {
            Chan<Object> donec = Chan.make();
            Context.afterFunc(ctx, () -> {
                goid.set(Go.goid());
                donec.close();
            });
            Thread canceller = Thread.ofPlatform().start(ctx::cancel);
            canceller.join();
            assertThat(within(donec, VERY_LONG)).isTrue();
        });
        assertThat(goid.get()).as("f ran as a goroutine").isPositive();
    }

    /** A context that is never cancelled never runs f; values and deadlines in between do not matter. */
    @Test
    void neverCancelledContextsNeverRunF() throws Exception {
        GoTesting.runGo(2, () -> {
            Chan<Object> donec = Chan.make();
            BooleanSupplier stop = Context.afterFunc(Context.withValue(Context.background(), "k", "v"), donec::close);
            assertThat(within(donec, SHORT)).isFalse();
            assertThat(stop.getAsBoolean()).isTrue();
        });
    }

    /** stop() racing the cancel: f runs exactly when stop() returns false, never twice. */
    @Test
    void stopRacingCancelRunsFAtMostOnce() throws Exception {
        AtomicInteger mismatches = new AtomicInteger();
        GoTesting.runGo(4, () -> {
            for (int i = 0; i < 500 * GoTesting.STRESS; i++) {
                CancelContext ctx = Context.withCancel(Context.background());
                AtomicInteger runs = new AtomicInteger();
                Chan<Object> ran = Chan.make(1);
                BooleanSupplier stop = Context.afterFunc(ctx, () -> {
                    runs.incrementAndGet();
                    ran.send(true);
                });
                Chan<Boolean> stopped = Chan.make(1);
                Go.go(() -> stopped.send(stop.getAsBoolean()));
                Go.go(ctx::cancel);
                boolean prevented = stopped.recv();
                if (!prevented) {
                    ran.recv(); // f was started: it must run
                } else if (within(ran, Duration.ofMillis(1))) {
                    mismatches.incrementAndGet();
                }
                if (runs.get() > 1) {
                    mismatches.incrementAndGet();
                }
            }
        });
        assertThat(mismatches.get()).as("rounds where stop() and f disagreed").isZero();
    }
}
