package io.gosched.sync;

import io.gosched.runtime.Sema;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A mutual exclusion lock, Go's {@code sync.Mutex}: not reentrant, not owned (any goroutine or thread
 * may unlock a locked Mutex). Usable from goroutines (waiting parks the goroutine) and from platform
 * threads (waiting parks the thread, uninterruptibly).
 *
 * <p>Fairness, as in Go: in normal mode waiters queue FIFO, but a woken waiter competes with
 * newcomers (which are already running and so usually win); a waiter that loses is queued at the
 * front. A waiter that has waited more than 1 ms switches the mutex to starvation mode: ownership is
 * then handed directly from the unlocker to the first waiter, and newcomers neither spin nor try to
 * take it. The mutex goes back to normal mode when a waiter that got it was the last one, or had
 * waited less than 1 ms.
 *
 * <p>Go: internal/sync/mutex.go
 */
public final class Mutex {
    /*
     * state bit layout (an int, CAS-updated as a whole):
     *
     *   31                              3   2   1   0
     *  +----------------------------------+---+---+---+
     *  |  waiters (number blocked in sema) | S | W | L |
     *  +----------------------------------+---+---+---+
     *   L = MUTEX_LOCKED, W = MUTEX_WOKEN (a waiter is awake and competing: Unlock need not wake
     *   another), S = MUTEX_STARVING.
     */
    static final int MUTEX_LOCKED = 1;
    static final int MUTEX_WOKEN = 1 << 1;
    static final int MUTEX_STARVING = 1 << 2;
    static final int MUTEX_WAITER_SHIFT = 3;

    /** Go's starvationThresholdNs: 1 ms. */
    static final long STARVATION_THRESHOLD_NS = 1_000_000L;

    private static final VarHandle STATE;
    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Mutex.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final VarHandle EPISODES;
    static {
        try {
            EPISODES = MethodHandles.lookup().findVarHandle(Mutex.class, "starvationEpisodes", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int state;
    private final Sema sema = new Sema(0, "sync.Mutex.Lock");
    /**
     * Times this mutex entered starvation mode (for tests and diagnostics);
     * bumped only on the slow path, by the waiter whose CAS sets {@link #MUTEX_STARVING}.
     */
    private volatile int starvationEpisodes;

    /** Locks, waiting while the mutex is held. Go: internal/sync/mutex.go Mutex.Lock */
    public void lock() {
        // Fast path: grab unlocked mutex.
        if (STATE.compareAndSet(this, 0, MUTEX_LOCKED)) {
            return;
        }
        lockSlow();
    }

    /**
     * Locks if the mutex is free and not in starvation mode; never waits. Go: internal/sync/mutex.go Mutex.TryLock
     */
    public boolean tryLock() {
        int old = state;
        if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) != 0) {
            return false;
        }
        // There may be a goroutine waiting for the mutex, but we are running now and can try to grab
        // the mutex before that goroutine wakes up.
        return STATE.compareAndSet(this, old, old | MUTEX_LOCKED);
    }

    private void lockSlow() {
        long waitStartTime = 0;
        boolean starving = false;
        boolean awoke = false;
        int iter = 0;
        int old = state;
        for (;;) {
            // Don't spin in starvation mode, ownership is handed off to waiters so we won't be able
            // to acquire the mutex anyway.
            if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) == MUTEX_LOCKED && Sema.canSpin(iter)) {
                // Active spinning makes sense. Try to set mutexWoken flag to inform Unlock to not
                // wake other blocked goroutines.
                if (!awoke && (old & MUTEX_WOKEN) == 0 && (old >>> MUTEX_WAITER_SHIFT) != 0
                        && STATE.compareAndSet(this, old, old | MUTEX_WOKEN)) {
                    awoke = true;
                }
                Sema.doSpin();
                iter++;
                old = state;
                continue;
            }
            int neu = old;
            // Don't try to acquire starving mutex, new arriving goroutines must queue.
            if ((old & MUTEX_STARVING) == 0) {
                neu |= MUTEX_LOCKED;
            }
            if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) != 0) {
                neu += 1 << MUTEX_WAITER_SHIFT;
            }
            // The current goroutine switches mutex to starvation mode. But if the mutex is currently
            // unlocked, don't do the switch: Unlock expects that a starving mutex has waiters.
            if (starving && (old & MUTEX_LOCKED) != 0) {
                neu |= MUTEX_STARVING;
            }
            if (awoke) {
                // The goroutine has been woken from sleep, so we need to reset the flag in either case.
                if ((neu & MUTEX_WOKEN) == 0) {
                    throw new IllegalStateException("sync: inconsistent mutex state");
                }
                neu &= ~MUTEX_WOKEN;
            }
            if (STATE.compareAndSet(this, old, neu)) {
                if ((neu & MUTEX_STARVING) != 0 && (old & MUTEX_STARVING) == 0) {
                    EPISODES.getAndAdd(this, 1); // entered starvation mode
                }
                if ((old & (MUTEX_LOCKED | MUTEX_STARVING)) == 0) {
                    break; // locked the mutex with CAS
                }
                // If we were already waiting before, queue at the front of the queue.
                boolean queueLifo = waitStartTime != 0;
                if (waitStartTime == 0) {
                    // Real time, not the runtime's clock, as Go's (runtime_nanotime): starvation
                    // is about how long a waiter really waited, on a goroutine or a thread.
                    waitStartTime = System.nanoTime();
                }
                sema.acquire(queueLifo);
                starving = starving || System.nanoTime() - waitStartTime > STARVATION_THRESHOLD_NS;
                old = state;
                if ((old & MUTEX_STARVING) != 0) {
                    // Ownership was handed off to us, but the mutex is in a somewhat inconsistent
                    // state: mutexLocked is not set and we are still accounted as a waiter. Fix that.
                    if ((old & (MUTEX_LOCKED | MUTEX_WOKEN)) != 0 || (old >>> MUTEX_WAITER_SHIFT) == 0) {
                        throw new IllegalStateException("sync: inconsistent mutex state");
                    }
                    int delta = MUTEX_LOCKED - (1 << MUTEX_WAITER_SHIFT);
                    if (!starving || (old >>> MUTEX_WAITER_SHIFT) == 1) {
                        // Exit starvation mode. Critical to do it here and consider wait time.
                        // Starvation mode is so inefficient, that two goroutines can go lock-step
                        // infinitely once they switch mutex to starvation mode.
                        delta -= MUTEX_STARVING;
                    }
                    STATE.getAndAdd(this, delta);
                    break;
                }
                awoke = true;
                iter = 0;
            } else {
                old = state;
            }
        }
    }

    /**
     * Unlocks. Any goroutine or thread may unlock a locked mutex.
     *
     * @throws IllegalStateException when the mutex is not locked (Go: fatal "sync: unlock of
     *     unlocked mutex"); as in Go the program is broken and the mutex must not be used again
     *     Go: internal/sync/mutex.go Mutex.Unlock
     */
    public void unlock() {
        // Fast path: drop lock bit.
        int neu = (int) STATE.getAndAdd(this, -MUTEX_LOCKED) - MUTEX_LOCKED;
        if (neu != 0) {
            // Outlined slow path to allow inlining the fast path.
            unlockSlow(neu);
        }
    }

    private void unlockSlow(int neu) {
        if (((neu + MUTEX_LOCKED) & MUTEX_LOCKED) == 0) {
            STATE.getAndAdd(this, MUTEX_LOCKED); // undo our subtraction; the caller's program is broken anyway
            throw new IllegalStateException("sync: unlock of unlocked mutex");
        }
        if ((neu & MUTEX_STARVING) == 0) {
            int old = neu;
            for (;;) {
                // If there are no waiters or a goroutine has already been woken or grabbed the lock,
                // no need to wake anyone. In starvation mode ownership is directly handed off from
                // unlocking goroutine to the next waiter.
                if ((old >>> MUTEX_WAITER_SHIFT) == 0 || (old & (MUTEX_LOCKED | MUTEX_WOKEN | MUTEX_STARVING)) != 0) {
                    return;
                }
                // Grab the right to wake someone.
                int next = (old - (1 << MUTEX_WAITER_SHIFT)) | MUTEX_WOKEN;
                if (STATE.compareAndSet(this, old, next)) {
                    sema.release(false);
                    return;
                }
                old = state;
            }
        } else {
            // Starving mode: handoff mutex ownership to the next waiter, and yield our time slice so
            // that the next waiter can start to run immediately. Note: mutexLocked is not set, the
            // waiter will set it after wakeup. But mutex is still considered locked if mutexStarving
            // is set, so new coming goroutines won't acquire it.
            sema.release(true);
        }
    }

    /** Whether the mutex is in starvation mode now; for tests and diagnostics. */
    boolean isStarving() {
        return (state & MUTEX_STARVING) != 0;
    }

    /** How many times this mutex has entered starvation mode; for tests and diagnostics. */
    int starvationEpisodes() {
        return starvationEpisodes;
    }

    /** Whether the mutex is held now (in starvation mode also while being handed over); a snapshot. */
    boolean isLocked() {
        return (state & (MUTEX_LOCKED | MUTEX_STARVING)) != 0;
    }

    /** Goroutines or threads blocked on the mutex now; a snapshot. */
    int waiters() {
        return state >>> MUTEX_WAITER_SHIFT;
    }

    @Override
    public String toString() {
        int s = state;
        return "Mutex[" + ((s & MUTEX_LOCKED) != 0 ? "locked" : "unlocked")
                + ((s & MUTEX_STARVING) != 0 ? ", starving" : "") + ", waiters=" + (s >>> MUTEX_WAITER_SHIFT) + "]";
    }
}
