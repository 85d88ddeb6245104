package io.gosched.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * A machine: a platform thread named {@code gosched-m-N} that runs {@code schedule()} while it
 * holds a P, parks on its note when there is nothing to do, and runs a goroutine's blocking
 * code without a P during a syscall.
 *
 * Go: runtime/runtime2.go m
 */
final class M extends Thread {

    final int mid;
    final Sched sched;

    /** The P held, or null (idle, in a syscall, or handed off). Only this M writes it. */
    volatile P p;
    /** The P handed over by startm before the wake-up. */
    volatile P nextp;
    /** The P held before entering a syscall, to try to take back on exit. */
    P oldp;
    /** See "Spinning and wakep" in Scheduler. Written only by this M. */
    boolean spinning;
    /** The goroutine mounted on this M, or null. */
    volatile G curg;
    /** Link on the idle M list; sched.lock must be held. */
    M schedlink;
    /** Set by findRunnable: the G it returns inherits the current time slice (came from runnext). */
    boolean inheritTime;
    /** This M's syscalltick snapshot, for exitsyscall's fast path. */
    long syscalltick;

    /** The park note: set by notewakeup, consumed by notesleep. */
    private volatile boolean wakeup;

    M(Sched sched, int mid) {
        super(sched.threadGroup, null, sched.threadNamePrefix + mid, 0, false);
        this.sched = sched;
        this.mid = mid;
        setDaemon(true);
    }

    @Override
    public void run() {
        sched.scheduler.mstart(this);
    }

    /** Parks this thread until {@link #notewakeup()}. Executed only by this M. */
    void notesleep() {
        while (!wakeup) {
            LockSupport.park(this);
        }
        wakeup = false;
    }

    /** Wakes this M from {@link #notesleep()}. Can be executed by anyone. */
    void notewakeup() {
        wakeup = true;
        LockSupport.unpark(this);
    }

    /** The M running the calling code, or null on a thread that is not an M. */
    static M current() {
        return Thread.currentThread() instanceof M m ? m : null;
    }
}
