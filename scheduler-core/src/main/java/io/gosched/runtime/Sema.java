package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A counting semaphore that parks goroutines (or platform threads), the runtime primitive under the
 * {@code io.gosched.sync} package. Low level: prefer {@code Mutex}, {@code WaitGroup} and channels.
 *
 * <p>Waiters are served in FIFO order (a waiter may ask to go first: {@link #acquire(boolean)}).
 * {@link #release(boolean)} with {@code handoff} gives the count directly to the first waiter, which
 * then cannot be overtaken by a newcomer, and (in a goroutine) yields so that the waiter runs at once
 * on the releaser's time slice. Blocking from a platform thread is uninterruptible (see
 * {@code Sudog.ThreadParker}).
 *
 * <p>Go: runtime/sema.go
 */
public final class Sema {
    /*
     * Go keeps one table of 251 roots keyed by the semaphore's address, each root a treap of
     * per-address FIFO lists. Here a semaphore is an object, so each Sema carries its own root: one
     * lock and one FIFO list. Everything else follows semacquire1/semrelease1.
     *
     * Memory order (no lost wake-up): an acquirer increments nwait and then re-checks count; a
     * releaser increments count and then reads nwait. Both are sequentially consistent atomics, so
     * at least one of them sees the other: either the acquirer takes the count itself, or the
     * releaser sees nwait > 0 and takes the lock to wake someone (and the acquirer, holding the lock
     * while it queues, is then on the queue or has already taken the count).
     */

    private static final VarHandle COUNT;
    private static final VarHandle NWAIT;
    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            COUNT = l.findVarHandle(Sema.class, "count", int.class);
            NWAIT = l.findVarHandle(Sema.class, "nwait", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int count; // Go's *addr
    private volatile int nwait; // waiters queued or about to queue; changed under lock, read lock-free
    private final RuntimeLock lock = new RuntimeLock();
    /** The ends of the waiters' queue (see WaitQ), guarded by lock. */
    private Sudog waitersFirst, waitersLast;

    /** The waiters: {@code WAITERS.enqueue(this, s)} and so on. Nothing reads them without the lock. */
    private static final WaitQ<Sema> WAITERS = new WaitQ<>() {
        @Override
        Sudog first(Sema s) {
            return s.waitersFirst;
        }

        @Override
        void setFirst(Sema s, Sudog sg) {
            s.waitersFirst = sg;
        }

        @Override
        Sudog last(Sema s) {
            return s.waitersLast;
        }

        @Override
        void setLast(Sema s, Sudog sg) {
            s.waitersLast = sg;
        }
    };

    /** What a goroutine waiting here shows in goroutine dumps (Go passes it to semacquire1). */
    private final WaitReason reason;

    /** A semaphore holding {@code initial} counts; its waiters show as {@code semacquire}. */
    public Sema(int initial) {
        this(initial, WaitReason.SEMACQUIRE);
    }

    /**
     * A semaphore holding {@code initial} counts whose waiting goroutines show waitReason in
     * goroutine dumps: one of Go's strings, such as {@code "sync.Mutex.Lock"} or
     * {@code "sync.WaitGroup.Wait"} (Go's semacquire1 reason argument).
     *
     * @throws IllegalArgumentException if waitReason is not one of Go's wait reasons
     */
    public Sema(int initial, String waitReason) {
        this(initial, WaitReason.named(waitReason));
    }

    private Sema(int initial, WaitReason reason) {
        if (initial < 0) {
            throw new IllegalArgumentException("negative semaphore count: " + initial);
        }
        this.count = initial;
        // Durability in a bubble follows the reason (Go: isIdleInSynctest): Cond.Wait is durable
        // anywhere, mutexes never are, and a WaitGroup's wait is durable only when the group is
        // the waiter's bubble's, which its Wait decides each time (acquireWaitGroup).
        this.reason = reason;
    }

    /** Takes one count, waiting (at the back of the queue) while there is none. Go: runtime/sema.go semacquire */
    public void acquire() {
        acquire(false);
    }

    /**
     * Takes one count, waiting while there is none; with {@code lifo}, waits at the front of the
     * queue (for a waiter that already waited once, as sync.Mutex does).
     * Go: runtime/sema.go semacquire1
     */
    public void acquire(boolean lifo) {
        acquire(lifo, reason);
    }

    /**
     * sync.WaitGroup's wait: takes one count, waiting at the back of the queue; {@code durable}
     * when the group belongs to the caller's bubble, so the bubble may count the waiter blocked
     * (Go: runtime/sema.go sync_runtime_SemacquireWaitGroup(addr, synctestDurable)).
     */
    public void acquireWaitGroup(boolean durable) {
        acquire(false, durable ? WaitReason.SYNCTEST_WAITGROUP_WAIT : WaitReason.SYNC_WAITGROUP_WAIT);
    }

    private void acquire(boolean lifo, WaitReason reason) {
        G gp = Scheduler.getg();
        if (gp != null) {
            if (gp.status() == G.SYSCALL) {
                Scheduler.syscallCallback(gp, () -> {
                    acquire(lifo, reason);
                    return null;
                });
                return;
            }
            Scheduler.checkpoint(gp);
        }
        // Easy case.
        if (cansemacquire()) {
            return;
        }
        // Harder case: increment waiter count; try cansemacquire one more time, return if
        // succeeded; enqueue itself as a waiter; sleep; (waiter descriptor is dequeued by signaler).
        Sudog s = Sudog.acquireSudog();
        s.c = this;
        Sudog.ThreadParker parker = gp == null ? Sudog.currentParker() : null;
        if (gp != null) {
            s.g = gp;
        } else {
            s.waiter = parker;
        }
        for (;;) {
            lock.lock();
            // Add ourselves to nwait to disable "easy case" in release.
            NWAIT.getAndAdd(this, 1);
            // Check cansemacquire to avoid missed wakeup.
            if (cansemacquire()) {
                NWAIT.getAndAdd(this, -1);
                lock.unlock();
                break;
            }
            // Any release after the cansemacquire knows we're waiting (we set nwait above), so go to sleep.
            s.handoff = false;
            if (lifo) {
                WAITERS.enqueueFirst(this, s);
            } else {
                WAITERS.enqueue(this, s);
            }
            if (gp != null) {
                try {
                    Scheduler.gopark(lock, null, reason);
                } catch (IllegalStateException pinned) {
                    // Could not park (pinned goroutine): no commit ran, the lock is still held.
                    WAITERS.dequeueSudoG(this, s);
                    NWAIT.getAndAdd(this, -1);
                    lock.unlock();
                    Sudog.releaseSudog(s);
                    throw pinned;
                }
            } else {
                parker.param = null;
                lock.unlock();
                parker.park(this);
            }
            if (s.handoff || cansemacquire()) {
                break;
            }
        }
        Sudog.releaseSudog(s);
    }

    /** Takes one count if one is available now. Go: runtime/sema.go cansemacquire */
    public boolean tryAcquire() {
        return cansemacquire();
    }

    private boolean cansemacquire() {
        for (;;) {
            int v = count;
            if (v == 0) {
                return false;
            }
            if (COUNT.compareAndSet(this, v, v - 1)) {
                return true;
            }
        }
    }

    /** Adds one count and wakes the first waiter, if any. Go: runtime/sema.go semrelease */
    public void release() {
        release(false);
    }

    /**
     * Adds one count and wakes the first waiter. With {@code handoff}, the count goes straight to
     * that waiter (no newcomer can take it first) and a releasing goroutine yields so the waiter runs
     * next.
     * Go: runtime/sema.go semrelease1
     */
    public void release(boolean handoff) {
        COUNT.getAndAdd(this, 1);
        // Easy case: no waiters? This check must happen after the add, to avoid a missed wakeup
        // (see the memory-order note above).
        if (nwait == 0) {
            return;
        }
        // Harder case: search for a waiter and wake it.
        lock.lock();
        if (nwait == 0) {
            // The count is already consumed by another goroutine, so no need to wake up another.
            lock.unlock();
            return;
        }
        Sudog s = WAITERS.dequeue(this);
        if (s != null) {
            NWAIT.getAndAdd(this, -1);
        }
        lock.unlock();
        if (s != null) { // May be slow or even yield, so unlock first
            boolean handedOff = handoff && cansemacquire();
            if (handedOff) {
                s.handoff = true;
            }
            G gp = Scheduler.getg();
            s.ready(Scheduler.mFor(gp));
            // Direct G handoff: the waiter is in our P's runnext; yield so it runs on our time slice.
            // (Go's goyield keeps the releaser on the local run queue; the public Go.yield puts it
            // on the global one. Either way the waiter, in runnext, runs next.)
            if (handedOff && gp != null) {
                Scheduler.gosched();
            }
        }
    }

    /** Counts available now; a snapshot, for tests and diagnostics. */
    public int available() {
        return count;
    }

    /** Waiters queued (or about to queue) now; a snapshot, for tests and diagnostics. */
    public int waiters() {
        return nwait;
    }

    // ---- spinning, for sync.Mutex -----------------------------------------------------------

    /**
     * Whether a lock waiter may spin once more (round {@code iter}). In a goroutine, Go's rule: few
     * rounds, a multicore machine, another P running and our P's run queue empty. On a platform
     * thread there is no P to look at: few rounds on a multicore machine.
     * Go: runtime/proc.go sync_runtime_canSpin
     */
    public static boolean canSpin(int iter) {
        if (Scheduler.getg() != null) {
            return Scheduler.canSpin(iter);
        }
        return iter < Scheduler.ACTIVE_SPIN && Runtime.getRuntime().availableProcessors() > 1;
    }

    /** One round of spinning: {@code Thread.onSpinWait()} x 30 (Go's procyield(active_spin_cnt)). Go: runtime/proc.go sync_runtime_doSpin */
    public static void doSpin() {
        Scheduler.doSpin();
    }
}
