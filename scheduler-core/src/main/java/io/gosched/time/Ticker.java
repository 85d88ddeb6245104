package io.gosched.time;

import io.gosched.runtime.Chan;
import io.gosched.runtime.RuntimeTimer;
import java.time.Duration;
import java.time.Instant;

/**
 * Delivers the time on {@link #c()} every period. A slow receiver misses ticks rather than
 * queueing them: the next tick is the first period boundary after now (Go's rule). As in Go
 * 1.23, the channel is unbuffered (len and cap 0), after {@link #stop()} or
 * {@link #reset(Duration)} returns no tick from before the call can be received, and a ticker
 * nobody references any more is garbage-collected even if it was never stopped: it is in a
 * scheduler heap only while someone is blocked on its channel.
 *
 * Go: time/tick.go Ticker
 */
public final class Ticker {

    private final RuntimeTimer t = RuntimeTimer.newChanTimer();

    private Ticker(Duration d) {
        long period = saturatedNanos(d);
        t.reset(RuntimeTimer.whenAfter(period), period);
    }

    /**
     * A ticker with period d.
     *
     * @throws IllegalArgumentException when d is not positive ("non-positive interval for NewTicker")
     *     Go: time.NewTicker
     */
    public static Ticker newTicker(Duration d) {
        checkPeriod(d, "NewTicker");
        return new Ticker(d);
    }

    /** The channel the ticks are sent on. */
    public Chan<Instant> c() {
        return t.c();
    }

    /** Stops the ticker; no tick is received afterwards. Go: time.Ticker.Stop */
    public void stop() {
        t.stop();
    }

    /**
     * Stops the ticker and restarts it with period d, discarding an unreceived tick.
     *
     * @throws IllegalArgumentException when d is not positive ("non-positive interval for Ticker.Reset")
     *     Go: time.Ticker.Reset
     */
    public void reset(Duration d) {
        checkPeriod(d, "Ticker.Reset");
        long period = saturatedNanos(d);
        t.reset(RuntimeTimer.whenAfter(period), period);
    }

    private static void checkPeriod(Duration d, String what) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("non-positive interval for " + what + ": " + d);
        }
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
