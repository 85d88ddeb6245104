package io.gosched.time;

import io.gosched.runtime.Bubble;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import java.time.Duration;
import java.time.Instant;

/**
 * Go's {@code time} package functions.
 *
 * Go: time/sleep.go, time/tick.go
 */
public final class Time {

    private Time() {
    }

    /**
     * The current time: inside a synctest bubble the bubble's fake clock (it starts at
     * 2000-01-01T00:00:00Z and moves only when every goroutine of the bubble is durably blocked),
     * else the real clock ({@link Instant#now()}). Go: time.Now
     */
    public static Instant now() {
        return Bubble.now();
    }

    /** A channel that receives the time once after d. Go: time.After */
    public static Chan<Instant> after(Duration d) {
        return Timer.newTimer(d).c();
    }

    /**
     * Runs f in its own goroutine after d; the returned timer's {@link Timer#stop()} cancels it.
     * Go: time.AfterFunc
     */
    public static Timer afterFunc(Duration d, Runnable f) {
        return Timer.afterFunc(d, f);
    }

    /** Pauses the current goroutine (or thread) for at least d. Go: time.Sleep */
    public static void sleep(Duration d) {
        Go.sleep(d);
    }

    /**
     * A channel of ticks every d. Its ticker cannot be stopped, but (Go 1.23) is garbage-collected
     * once the channel is no longer referenced. Null when d is not positive (Go returns nil).
     * Go: time.Tick
     */
    public static Chan<Instant> tick(Duration d) {
        if (d.isNegative() || d.isZero()) {
            return null;
        }
        return Ticker.newTicker(d).c();
    }
}
