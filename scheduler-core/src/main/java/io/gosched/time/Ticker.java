package io.gosched.time;

import io.gosched.runtime.Chan;
import io.gosched.runtime.RuntimeTimer;
import java.time.Duration;
import java.time.Instant;

/**
 * Delivers the time on {@link #c()} every period. A slow receiver misses ticks rather than
 * queueing them: the channel holds one, and the next tick is the first period boundary after
 * now (Go's rule). After {@link #stop()} or {@link #reset(Duration)} returns, no tick from
 * before the call can be received.
 *
 * Go: time/tick.go Ticker
 */
public final class Ticker {

    private final Chan<Instant> c = Chan.make(1);
    private final Object lock = new Object();
    private long seq;
    private RuntimeTimer current;

    private Ticker(Duration d) {
        arm(d);
    }

    /**
     * A ticker with period d.
     *
     * @throws IllegalArgumentException when d is not positive ("non-positive interval for NewTicker")
     *     Go: time.NewTicker
     */
    public static Ticker newTicker(Duration d) {
        checkPeriod(d);
        return new Ticker(d);
    }

    /** The channel the ticks are sent on. */
    public Chan<Instant> c() {
        return c;
    }

    /** Stops the ticker; no tick is sent afterwards. Go: time.Ticker.Stop */
    public void stop() {
        synchronized (lock) {
            disarmLocked();
        }
        c.tryRecv();
    }

    /** Stops the ticker and restarts it with period d, discarding an unreceived tick. Go: time.Ticker.Reset */
    public void reset(Duration d) {
        checkPeriod(d);
        synchronized (lock) {
            disarmLocked();
        }
        c.tryRecv();
        arm(d);
    }

    private static void checkPeriod(Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("non-positive interval for NewTicker: " + d);
        }
    }

    /** lock held. */
    private void disarmLocked() {
        seq++;
        if (current != null) {
            current.stop();
            current = null;
        }
    }

    private void arm(Duration d) {
        long period = saturatedNanos(d);
        synchronized (lock) {
            long mySeq = seq;
            RuntimeTimer rt = new RuntimeTimer((arg, when, delay) -> fire((Long) arg, delay), mySeq);
            current = rt;
            rt.reset(RuntimeTimer.whenAfter(period), period);
        }
    }

    private void fire(long mySeq, long delay) {
        synchronized (lock) {
            if (mySeq != seq) {
                return;
            }
            c.trySend(Instant.now().minusNanos(delay)); // full: the receiver is slow, drop the tick
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
