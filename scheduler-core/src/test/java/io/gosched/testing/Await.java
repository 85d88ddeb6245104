package io.gosched.testing;

import io.gosched.runtime.Go;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The one way tests wait for something that happens on another thread or goroutine: poll the
 * condition, pausing between polls (never a busy spin: the machine is shared and a spinning waiter
 * takes the very CPU the awaited work needs), and fail with what was awaited when it does not
 * come. The bound is a hang detector, not a performance assertion: generous, so a slow CI machine
 * does not fail, and well inside the JUnit default timeout, so the message names the wait.
 *
 * <p>Inside a goroutine the pause parks the goroutine ({@code Go.sleep}), so the P runs the work
 * being waited for; on a platform thread it sleeps the thread. Shipped in scheduler-core's test-jar,
 * so every module's tests use it.
 */
public final class Await {

    /** What a test waits for when it names no bound. */
    public static final Duration DEFAULT = Duration.ofSeconds(30);
    private static final long PAUSE_MILLIS = 5;

    private Await() {
    }

    /** Waits up to {@link #DEFAULT} until {@code condition} holds; an AssertionError naming {@code what} otherwise. */
    public static void until(String what, BooleanSupplier condition) {
        until(what, DEFAULT, condition);
    }

    /** Waits up to {@code within} until {@code condition} holds; an AssertionError naming {@code what} otherwise. */
    public static void until(String what, Duration within, BooleanSupplier condition) {
        if (!holdsWithin(within, condition)) {
            throw new AssertionError("not within " + within.toSeconds() + " s: " + what);
        }
    }

    /**
     * Whether {@code condition} held within {@code within} (checked once more at the end), for
     * tests that assert on the answer themselves, or that wait for something that must not come.
     */
    public static boolean holdsWithin(Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return condition.getAsBoolean();
            }
            pause();
        }
        return true;
    }

    /** Waits until {@code probe} gives a non-null value and returns it; an AssertionError naming {@code what} otherwise. */
    public static <T> T value(String what, Duration within, Supplier<T> probe) {
        long deadline = System.nanoTime() + within.toNanos();
        for (;;) {
            T v = probe.get();
            if (v != null) {
                return v;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + within.toSeconds() + " s: " + what);
            }
            pause();
        }
    }

    /**
     * Waits until {@code assertion} passes (throws no AssertionError); otherwise fails naming
     * {@code what}, with the last assertion's failure as the cause.
     */
    public static void untilPasses(String what, Duration within, Runnable assertion) {
        long deadline = System.nanoTime() + within.toNanos();
        for (;;) {
            try {
                assertion.run();
                return;
            } catch (AssertionError e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("not within " + within.toSeconds() + " s: " + what, e);
                }
            }
            pause();
        }
    }

    private static void pause() {
        if (Go.inGoroutine()) {
            Go.sleep(Duration.ofMillis(PAUSE_MILLIS));
            return;
        }
        try {
            Thread.sleep(PAUSE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
