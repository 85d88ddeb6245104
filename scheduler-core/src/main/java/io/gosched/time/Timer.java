package io.gosched.time;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.RuntimeTimer;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A single event: after its duration, the current time is sent on {@link #c()} (or, for
 * {@link Time#afterFunc}, a function starts in its own goroutine). Works from goroutines and
 * platform threads alike.
 *
 * <p>Stop and reset follow Go 1.23's synchronous timer channels: after {@link #stop()} or
 * {@link #reset(Duration)} returns, no value from before the call can be received, and they
 * return true if the timer had not yet delivered (it was pending, its send was in flight, or
 * its value sat unreceived in the channel).
 *
 * <p>The channel has a buffer of one, so the runtime's timer function never blocks; Go reports
 * its timer channels as unbuffered (len and cap 0), this one reports the buffer.
 *
 * Go: time/sleep.go Timer, runtime/time.go (timer channels)
 */
public final class Timer {

    private final Chan<Instant> c;
    private final Runnable f;
    private final GoRuntime runtime;

    /** Guards seq, armed and current (Go's sendLock plus the timer lock). */
    private final Object lock = new Object();
    private long seq;
    private boolean armed;
    private RuntimeTimer current;

    private Timer(Chan<Instant> c, Runnable f, GoRuntime runtime) {
        this.c = c;
        this.f = f;
        this.runtime = runtime;
    }

    /** A timer that sends the current time on its channel after d. Go: time.NewTimer */
    public static Timer newTimer(Duration d) {
        Timer t = new Timer(Chan.make(1), null, null);
        t.arm(d);
        return t;
    }

    /**
     * A timer that runs f in its own goroutine after d (on a virtual thread when created outside
     * any goroutine). Go: time.AfterFunc
     */
    static Timer afterFunc(Duration d, Runnable f) {
        Objects.requireNonNull(f, "f");
        Timer t = new Timer(null, f, Go.inGoroutine() ? Go.runtime() : null);
        t.arm(d);
        return t;
    }

    /** The channel the time is sent on; null for an afterFunc timer (Go: C is nil). */
    public Chan<Instant> c() {
        return c;
    }

    /**
     * Stops the timer. Returns true if this call prevented the delivery, false if the timer had
     * already delivered its value (or run its function) or been stopped.
     * Go: time.Timer.Stop
     */
    public boolean stop() {
        boolean pending;
        synchronized (lock) {
            pending = disarmLocked();
        }
        return drain() | pending;
    }

    /**
     * Re-arms the timer to fire after d, discarding any undelivered value. Returns whether the
     * timer had been pending, as {@link #stop()} would have.
     * Go: time.Timer.Reset
     */
    public boolean reset(Duration d) {
        boolean pending;
        synchronized (lock) {
            pending = disarmLocked();
        }
        pending |= drain();
        arm(d);
        return pending;
    }

    /** lock held. */
    private boolean disarmLocked() {
        boolean pending = armed;
        armed = false;
        seq++; // a firing already taken off the heap sees a stale seq and delivers nothing
        if (current != null) {
            current.stop();
            current = null;
        }
        return pending;
    }

    private boolean drain() {
        return c != null && c.tryRecv() != null;
    }

    private void arm(Duration d) {
        long nanos = Ticker.saturatedNanos(d);
        synchronized (lock) {
            long mySeq = seq;
            armed = true;
            RuntimeTimer rt = new RuntimeTimer((arg, when, delay) -> fire((Long) arg, delay), mySeq);
            current = rt;
            rt.reset(RuntimeTimer.whenAfter(nanos), 0);
        }
    }

    /** The runtime timer fired. Runs on a scheduler thread: must not block. */
    private void fire(long mySeq, long delay) {
        synchronized (lock) {
            if (mySeq != seq || !armed) {
                return; // stopped or reset after the runtime took it off the heap
            }
            armed = false;
            current = null;
            if (c != null) {
                // The delivered time is when the timer was due, not when this thread got to it.
                c.trySend(Instant.now().minusNanos(delay));
                return;
            }
        }
        if (runtime != null && !runtime.isShutdown()) {
            runtime.go(f);
        } else {
            Thread.ofVirtual().name("gosched-afterfunc").start(f);
        }
    }
}
