package io.gosched.runtime;

import java.util.Objects;

/**
 * A runtime timer: a function the scheduler calls once {@link #nanotime()} reaches {@code when}
 * (and again every {@code period} for a periodic timer). This is the low-level timer that
 * {@code Go.sleep}, {@code io.gosched.time} and the network deadlines are built on, as Go's
 * {@code time} package is built on {@code runtime.timer}.
 *
 * <p>Where it lives. {@link #reset} puts the timer into the 4-ary heap of the caller's P when
 * called from a goroutine, so it is run by the M that holds that P (in {@code findRunnable}), by
 * a thief on its last stealing pass when that P is busy, and an M with nothing to do sleeps
 * exactly until it is due. Called from any other thread, the timer goes to one JVM-wide heap
 * served by a daemon thread ({@code gosched-timers}).
 *
 * <p>The function runs on a scheduler thread, outside every lock: it must be short and must not
 * block (Go's rule for timer functions). It may ready goroutines, send on a buffered channel
 * without blocking, or start a goroutine.
 *
 * <p>Locking. A heaped timer's {@code when}, {@code ts} and {@code idx} change only under both
 * the monitor of the heap holding it and the timer's monitor (in that order, Go's {@code ts.mu}
 * then {@code t.mu}); an unheaped timer's fields change under its monitor alone. Unlike Go
 * 1.23, a stopped timer is removed from its heap at once (no zombies): the heap tracks each
 * timer's index, so deletion is O(log n) and a heap never holds dead entries.
 *
 * Go: runtime/time.go timer
 */
public final class RuntimeTimer {

    /** What a timer does when it fires. */
    @FunctionalInterface
    public interface Func {
        /**
         * Called when the timer fires.
         *
         * @param arg   the argument given to the constructor
         * @param when  the {@link RuntimeTimer#nanotime()} at which the timer was due
         * @param delay how late the call is, in nanoseconds (now - when), never negative
         */
        void fire(Object arg, long when, long delay);
    }

    final Func f;
    final Object arg;

    // ---- guarded as described in the class comment --------------------------------------------
    /** When the timer fires next, in nanotime; 0 when it is not pending. */
    long when;
    /** The period of a periodic timer, 0 for a one-shot. */
    long period;
    /** The heap holding this timer, or null. Volatile so that stop/reset can find it before locking. */
    volatile TimerHeap ts;
    /** The timer's index in ts's array; heap lock held. */
    int idx;

    /** Creates a stopped timer that calls {@code f.fire(arg, ...)} when it fires. */
    public RuntimeTimer(Func f, Object arg) {
        this.f = Objects.requireNonNull(f, "f");
        this.arg = arg;
    }

    /** The clock of every runtime timer, in nanoseconds: {@link System#nanoTime()}. */
    public static long nanotime() {
        return System.nanoTime();
    }

    /**
     * A deadline d nanoseconds from now, saturating at Long.MAX_VALUE instead of overflowing
     * (Go: when() in time.go).
     */
    public static long whenAfter(long d) {
        long now = nanotime();
        long t = now + Math.max(0, d);
        return t < now ? Long.MAX_VALUE : t;
    }

    /**
     * Arms the timer to fire at {@code when} (nanotime) and then every {@code period}
     * nanoseconds if period &gt; 0. Returns whether the timer was pending before.
     * Can be executed by any thread.
     * Go: runtime/time.go timer.modify, timer.reset
     */
    public boolean reset(long when, long period) {
        if (when <= 0 || period < 0) {
            throw new IllegalArgumentException("timer when must be positive and period non-negative: " + when + ", " + period);
        }
        for (;;) {
            TimerHeap h = ts;
            if (h == null) {
                h = TimerHeap.current();
            }
            boolean wake;
            boolean pending;
            synchronized (h) {
                synchronized (this) {
                    TimerHeap cur = ts;
                    if (cur != null && cur != h) {
                        continue; // moved to another heap meanwhile (procresize, a spare P's return)
                    }
                    pending = cur != null;
                    this.when = when;
                    this.period = period;
                    long before = h.minWhen;
                    if (pending) {
                        h.fix(idx);
                    } else {
                        h.add(this);
                    }
                    h.updateMinWhen();
                    wake = before == 0 || when < before;
                }
            }
            if (wake) {
                h.wake(when);
            }
            return pending;
        }
    }

    /**
     * Stops the timer. Returns whether it was pending (false: it already fired, its function
     * may be running right now, or it was never armed).
     * Can be executed by any thread.
     * Go: runtime/time.go timer.stop
     */
    public boolean stop() {
        for (;;) {
            TimerHeap h = ts;
            if (h == null) {
                return false;
            }
            synchronized (h) {
                synchronized (this) {
                    if (ts != h) {
                        continue;
                    }
                    h.removeAt(idx);
                    when = 0;
                    h.updateMinWhen();
                    return true;
                }
            }
        }
    }

    /** Whether the timer is pending (in a heap). Racy: for tests and diagnostics. */
    public boolean isPending() {
        return ts != null;
    }
}
