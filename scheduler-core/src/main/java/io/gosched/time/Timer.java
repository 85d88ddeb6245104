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
 * <p>Go 1.23 timer channels ({@code asynctimerchan=0}). The channel is unbuffered: its
 * {@code len()} and {@code cap()} are 0, and after {@link #stop()} or {@link #reset(Duration)}
 * returns no value from before the call can be received. Both return true if the timer had not
 * yet delivered (it was pending, its send was in flight, or its value was unreceived). The
 * channel is receive-only: sending on it or closing it throws UnsupportedOperationException.
 *
 * <p>Garbage collection. The timer is in a scheduler heap only while someone is blocked
 * receiving on its channel, so a timer nobody references any more (a {@code Time.after} in a
 * select loop whose other case won) is collected before it fires, stopped or not.
 *
 * Go: time/sleep.go Timer, runtime/time.go (timer channels)
 */
public final class Timer {

    private final RuntimeTimer t;
    private final Chan<Instant> c;

    private Timer(RuntimeTimer t) {
        this.t = t;
        this.c = t.c();
    }

    /** A timer that sends the current time on its channel after d. Go: time.NewTimer */
    public static Timer newTimer(Duration d) {
        Timer timer = new Timer(RuntimeTimer.newChanTimer());
        timer.t.reset(when(d), 0);
        return timer;
    }

    /**
     * A timer that runs f in its own goroutine after d (on a virtual thread when created outside
     * any goroutine). Go: time.AfterFunc
     */
    static Timer afterFunc(Duration d, Runnable f) {
        Objects.requireNonNull(f, "f");
        GoRuntime runtime = Go.inGoroutine() ? Go.runtime() : null;
        Timer timer = new Timer(new RuntimeTimer((arg, when, delay) -> goFunc(runtime, f), null));
        timer.t.reset(when(d), 0);
        return timer;
    }

    /** The channel the time is sent on; null for an afterFunc timer (Go: C is nil). */
    public Chan<Instant> c() {
        return c;
    }

    /**
     * Stops the timer. Returns true if this call prevented the delivery, false if the timer had
     * already delivered its value (or started its function) or been stopped.
     * Go: time.Timer.Stop
     */
    public boolean stop() {
        return t.stop();
    }

    /**
     * Re-arms the timer to fire after d, discarding any undelivered value. Returns whether the
     * timer had been pending, as {@link #stop()} would have.
     * Go: time.Timer.Reset
     */
    public boolean reset(Duration d) {
        return t.reset(when(d), 0);
    }

    /** The nanotime d from now; never in the past, saturating far in the future. Go: time.when */
    static long when(Duration d) {
        return RuntimeTimer.whenAfter(Ticker.saturatedNanos(d));
    }

    /** An afterFunc timer fired. Runs on a scheduler thread: must not block. Go: time.goFunc */
    private static void goFunc(GoRuntime runtime, Runnable f) {
        if (runtime != null && !runtime.isShutdown()) {
            runtime.go(f);
        } else {
            Thread.ofVirtual().name("gosched-afterfunc").start(f);
        }
    }
}
