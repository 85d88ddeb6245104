package io.gosched.testing;

import io.gosched.runtime.Bubble;

/**
 * Go's {@code testing/synctest}: runs concurrent code in a bubble with a fake clock, so a test of
 * a 30-second timeout takes microseconds and does not depend on the machine's load.
 *
 * <p>Inside a bubble, {@code Time.now()}, {@code Go.sleep}, {@code Timer}, {@code Ticker},
 * {@code Time.after}, {@code Time.afterFunc} and context deadlines use the bubble's clock. It
 * starts at 2000-01-01T00:00:00Z and moves only when every goroutine of the bubble is durably
 * blocked: on a channel, select, timer, {@code Cond} or {@code WaitGroup} that belongs to the
 * bubble (mutexes, I/O, syscalls and anything from outside the bubble are not durable, as in Go).
 * It then jumps to the next timer. Goroutines started inside belong to the bubble, and so do the
 * channels, timers and WaitGroups they create; using one from outside fails with an
 * {@link IllegalStateException}.
 *
 * <p>When every goroutine is durably blocked and no timer is pending, nothing can ever wake them:
 * {@link #test} throws {@link io.gosched.runtime.DeadlockException} with Go's message and a
 * dump of the bubble's goroutines.
 *
 * <p>For JUnit 5, {@code @GoTest} in module {@code scheduler-test} runs a test method in a bubble.
 * See docs/synctest.md for the rules and the departures from Go.
 *
 * Go: testing/synctest
 */
public final class Synctest {

    private Synctest() {
    }

    /**
     * Runs body as the root goroutine of a new bubble and returns once every goroutine of the
     * bubble has exited; rethrows body's exception. From a goroutine it uses that goroutine's
     * runtime; from any other thread, a fresh runtime (GOMAXPROCS = available processors) that is
     * closed afterwards. Go: synctest.Test
     *
     * @throws io.gosched.runtime.DeadlockException when the bubble deadlocks
     * @throws IllegalStateException when called from inside a bubble (bubbles do not nest)
     */
    public static void test(Runnable body) {
        Bubble.run(body);
    }

    /**
     * Returns once every other goroutine of the current bubble is durably blocked; the clock does
     * not move meanwhile. Go: synctest.Wait
     *
     * @throws IllegalStateException outside a bubble, or while another goroutine of the bubble waits
     */
    public static void await() {
        Bubble.await();
    }
}
