package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The runtime's internal mutex guarding one channel or one semaphore (Go's {@code runtime.mutex}).
 *
 * <p>Why not {@code ReentrantLock} or {@code synchronized}: the lock taken by a goroutine before it
 * parks is released by the {@link ParkCommit} (Go's {@code chanparkcommit}), which runs on the
 * scheduler side after the continuation has yielded. A monitor cannot be released from another frame
 * (and yielding while holding one pins the carrier). A {@code ReentrantLock} would in fact work (the
 * commit runs on the same carrier thread that locked, because nothing between {@code lock()} and
 * {@code gopark} yields), but its owner-thread bookkeeping buys nothing here, and a lock that is just
 * a word has no owner to get wrong. So this lock has no owner: whoever holds the right to release it
 * (the locker, or the commit that the locker handed it to) releases it.
 *
 * <p>Invariant for every user: between {@link #lock()} and the matching {@link #unlock()} the holder
 * never yields its continuation, never blocks, never readies a goroutine and never runs user code.
 * Critical sections are a few dozen instructions, so waiters spin, then yield the OS thread, as
 * {@code lock_futex.go} does before it sleeps (we never sleep: the sections are too short for a
 * futex round trip to pay off, and there is no waiter list to keep).
 *
 * <p>Go: runtime/lock_futex.go lock2, unlock2
 */
final class RuntimeLock implements ParkCommit {
    private static final VarHandle STATE;
    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RuntimeLock.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int state; // 0 free, 1 held; CAS to take, release-store to give back

    /** Can be called by any thread or goroutine not already holding this lock (it is not reentrant). */
    void lock() {
        if (!STATE.compareAndSet(this, 0, 1)) {
            lockSlow();
        }
    }

    private void lockSlow() {
        lockSlow(STATE, this);
    }

    /**
     * The contended path of a lock that is an int word of some object: this class's own, or one
     * embedded in the object it guards (a channel's, see Chan.lockState). The word takes the same
     * values: 0 free, 1 held.
     */
    static void lockSlow(VarHandle word, Object holder) {
        int spins = 0;
        for (;;) {
            if ((int) word.getVolatile(holder) == 0 && word.compareAndSet(holder, 0, 1)) {
                return;
            }
            if (spins < Scheduler.ACTIVE_SPIN) {
                // Go's procyield(active_spin_cnt) between looks, not a look per pause: every read
                // of the word by a waiter pulls its cache line away from the holder, which then
                // pays a miss on its next operation. Left alone, the holder runs several short
                // critical sections back to back on a line it keeps.
                spins++;
                Scheduler.doSpin();
            } else {
                Thread.yield(); // osyield: the holder may have been descheduled by the OS
            }
        }
    }

    /** The lock must be held; called by the holder or by the park commit it handed the lock to. */
    void unlock() {
        assert state == 1 : "unlock of unlocked runtime lock";
        STATE.setRelease(this, 0); // store-release: publishes the critical section
    }

    /**
     * The lock is its own park commit: a goroutine parking with this lock held passes it to
     * {@code gopark} and the scheduler releases it once the G is waiting (Go's chanparkcommit).
     * Passing the lock itself instead of a shared commit plus the lock as its argument saves a
     * reference store into the G per park (see G "Why the park fields are few").
     */
    @Override
    public boolean commit(G gp, Object unused) {
        unlock();
        return true;
    }

    boolean isHeld() {
        return state == 1;
    }
}
