package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A waiter in a wait queue: a goroutine, a platform thread or an asynchronous operation blocked on a
 * channel (in {@code Chan.SENDQ}/{@code Chan.RECVQ}) or on a {@link Sema}.
 *
 * <p>One G (or thread) may own several sudogs at once when it selects; they are linked through
 * {@link #waitlink} in lock order. Every field except {@code waitlink} is guarded by the lock of the
 * channel or semaphore whose queue the sudog is on; once a waker has dequeued a sudog it owns it
 * exclusively until it calls {@link #ready()}, after which it must not touch it again (the woken
 * side recycles it at once).
 *
 * <p>Allocation: every wait takes a new sudog ({@link #acquireSudog()}); unlike Go, sudogs are not
 * cached, because on the JVM a young object is cheaper to write into than a recycled old one (see
 * "Why sudogs are not recycled" below).
 *
 * <p>Go: runtime/runtime2.go sudog; runtime/proc.go acquireSudog, releaseSudog
 */
final class Sudog {
    /** The goroutine waiting; null when the waiter is a platform thread or an async operation. */
    G g;
    /** The non-goroutine waiter (a {@link ThreadParker} or an async future); null for a goroutine. */
    Waiter waiter;
    /** Queue links; guarded by the owning queue's lock. Both null when not on a queue. */
    Sudog next;
    Sudog prev;
    /** Send: the value being sent (taken by the receiver). Receive: the value received (set by the sender). */
    Object elem;
    /** The channel or semaphore this sudog waits on (for select cleanup and async cancellation). */
    Object c;
    /**
     * The waker must win {@link #claim()} before taking this sudog: true for select cases (Go's
     * {@code isSelect}) and, with the same meaning, for async operations (cancel races with wakers).
     */
    boolean isSelect;
    /** True when the wait ended because a value was transferred, false when woken by close. */
    boolean success;
    /** Select: the next sudog of the same select, in lock order; owned by the selecting G. */
    Sudog waitlink;
    /**
     * Sema: the releaser handed the count over directly (Go's {@code ticket = 1}). Go's ticket
     * is also the random priority of its semaphore treap; Sema keeps a plain FIFO (see Sema), so
     * only the flag is left, and as a boolean it brings the sudog from 48 bytes to 40.
     */
    boolean handoff;
    /**
     * The waiting goroutine released the queue's lock before yielding (Chan's plain send and
     * receive, see Scheduler.goparkUnlocked): its waker may find it still running.
     */
    boolean parkAfterUnlock;

    /**
     * Called by a waker holding the queue's lock, for a sudog with {@code isSelect}: wins the right to
     * complete this wait. Fails when another case of the same select already fired, or the async
     * operation was cancelled.
     */
    boolean claim() {
        G gp = g;
        return gp != null ? gp.casSelectDone(0, 1) : waiter.claim();
    }

    /**
     * Called by the waker after it dequeued this sudog, set {@link #success} and {@link #elem}, and
     * released every runtime lock: makes the waiter runnable. Never call with a lock held.
     * Go: runtime/chan.go send (the goready half)
     */
    void ready() {
        ready(M.current());
    }

    /** {@link #ready()} by a waker running on mp (null: not on an M), found once by its operation. */
    void ready(M mp) {
        G gp = g;
        if (gp != null) {
            if (isSelect) {
                gp.param = this; // which case fired; a plain wait knows its one sudog (see G "Why the park fields are few")
            }
            Scheduler.goready(gp, parkAfterUnlock, mp);
        } else {
            waiter.wake(this);
        }
    }

    // ---- allocation ------------------------------------------------------------------------

    /*
     * Why sudogs are not recycled (Go caches them per P). A recycled sudog lives long enough to be
     * promoted to the old generation, and with G1 (JDK 25) every non-null reference store into an
     * old object that points outside its region pays a StoreLoad fence in the card-marking barrier:
     * elem, g, c, the queue links, each time the sudog is used. A fresh sudog is a TLAB bump in the
     * young generation, whose stores skip that fence. Measured on the ping-pong workload, a
     * per-M cache of 16 sudogs cost more than it saved (see docs/channels-and-sync.md). Fresh
     * sudogs also rule out a stale waker touching a sudog that was already reused.
     */

    private static final ThreadLocal<ThreadParker> PARKER = new ThreadLocal<>();

    /** Can be called by any goroutine or thread; returns a new sudog. Go: runtime/proc.go acquireSudog */
    static Sudog acquireSudog() {
        return new Sudog();
    }

    /**
     * Called by the sudog's owner once no queue and no waker can reach it: drops what it holds so
     * that nothing outlives the wait through a stray reference. Go: runtime/proc.go releaseSudog
     */
    static void releaseSudog(Sudog s) {
        assert s.next == null && s.prev == null : "releaseSudog: sudog still on a queue";
        s.elem = null;
    }

    /** The calling platform thread's parker (one per thread, reused for every wait). Never called by a goroutine. */
    static ThreadParker currentParker() {
        assert M.current() == null || M.current().curg() == null : "currentParker called by a goroutine";
        ThreadParker p = PARKER.get();
        if (p == null) {
            p = new ThreadParker(Thread.currentThread());
            PARKER.set(p);
        }
        return p;
    }

    /** Who is woken when a sudog's wait ends, when that is not a goroutine. */
    interface Waiter {
        /** See {@link Sudog#claim()}. Called with the queue's lock held. */
        boolean claim();

        /** See {@link Sudog#ready()}. Called with no lock held. */
        void wake(Sudog sg);
    }

    /**
     * A platform thread blocked in a channel, select or semaphore operation. It plays the part of the
     * G for a thread: {@code selectDone} and {@code param} are the fields of G with the same names.
     *
     * <p>Interrupts: blocking operations of a platform thread are not interruptible, like Go's (a
     * goroutine cannot be interrupted either, and a withdrawn blocking send would need an exception
     * type the API does not have). An interrupt does not end the wait; the thread's interrupt status
     * is kept and set again when the operation returns. Callers that need to give up use
     * {@code sendAsync}/{@code recvAsync} and cancel or time out the future. Spurious returns of
     * {@link LockSupport#park} are absorbed by re-checking {@code param}.
     */
    static final class ThreadParker implements Waiter {
        private static final VarHandle SELECT_DONE;
        static {
            try {
                SELECT_DONE = MethodHandles.lookup().findVarHandle(ThreadParker.class, "selectDone", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final Thread thread;
        /** Go's {@code gp.selectDone}: wakers of select sudogs CAS it 0 -> 1 under the channel lock. */
        volatile int selectDone;
        /** Go's {@code gp.param}: the sudog whose wait completed; written by the waker, volatile publishes the sudog's fields. */
        volatile Sudog param;
        ThreadParker(Thread thread) {
            this.thread = thread;
        }

        @Override
        public boolean claim() {
            return SELECT_DONE.compareAndSet(this, 0, 1);
        }

        @Override
        public void wake(Sudog sg) {
            Thread t = thread; // read before publishing: once param is set, sg may be released
            param = sg;
            LockSupport.unpark(t);
        }

        /**
         * Executed only by {@link #thread}, after it enqueued its sudog(s) and released every lock
         * ({@code param} was cleared before enqueueing). Returns the sudog that fired.
         */
        Sudog park(Object blocker) {
            boolean interrupted = false;
            Sudog sg;
            while ((sg = param) == null) {
                LockSupport.park(blocker);
                if (Thread.interrupted()) {
                    interrupted = true; // see "Interrupts" above: not a reason to stop waiting
                }
            }
            param = null;
            if (interrupted) {
                thread.interrupt();
            }
            return sg;
        }
    }
}
