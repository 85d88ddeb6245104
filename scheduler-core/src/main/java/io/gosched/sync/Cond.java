package io.gosched.sync;

import io.gosched.runtime.Sema;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A condition variable, Go's {@code sync.Cond}: a rendezvous point for goroutines (or threads)
 * waiting for, or announcing, a change of state guarded by a {@link Mutex}. {@link #await()}
 * unlocks the mutex, waits for a {@link #signal()} or {@link #broadcast()}, and locks it again
 * before returning, so the usual shape is {@code l.lock(); while (!condition) c.await(); ...;
 * l.unlock();}. Signal and broadcast may be called with or without the mutex held.
 *
 * <p>Wake-up order is Go's notify list: every wait takes a ticket before it unlocks the mutex,
 * {@code signal()} wakes the holder of the oldest ticket not yet notified, {@code broadcast()}
 * every ticket taken so far. A wait that takes its ticket after a signal or broadcast is never
 * woken by it, even if it parks only after the waker ran. Waiting from a goroutine parks only
 * the goroutine; from a platform thread it parks the thread, uninterruptibly.
 *
 * <p>Go: sync/cond.go, runtime/sema.go notifyList
 */
public final class Cond {
    /*
     * The notify list. Invariants:
     * - wait is the next ticket to hand out; notify the next ticket to wake. Tickets in
     *   [notify, wait) belong to waits not yet woken; tickets below notify are woken (or will not
     *   park: a wait that finds its ticket below notify returns at once).
     * - The list holds the parked (or about to park) waits with tickets >= notify, in ticket
     *   order of arrival under lock, which may differ from ticket order: signal searches for
     *   its ticket instead of taking the head.
     * - A ticket whose await failed (the mutex was not held) is withdrawn (notifyListCancel):
     *   no wait will ever hold it, so it must not swallow a signal. Not yet notified, it goes to
     *   abandoned and the next signal that reaches it skips on to the following ticket. Already
     *   notified by a signal that did not find it in the list (the signal took it for a wait
     *   between its ticket and its park, see signalledAhead), that signal is passed on to the
     *   oldest ticket handed out before it, if one is still waiting to be notified.
     * Comparisons are on 32-bit tickets with wrap-around (Go's less()).
     *
     * JVM departure: Go never withdraws a ticket, because Cond.Wait without the lock dies in
     * Unlock ("fatal error: sync: unlock of unlocked mutex", not recoverable); here that failure
     * is an IllegalStateException a caller may catch and go on from.
     */
    private final Mutex l;
    private final AtomicInteger wait = new AtomicInteger(); // ticket of the next waiter; incremented outside lock
    private volatile int notify;                            // ticket of the next waiter to wake; written under lock
    private final Object lock = new Object();
    private Waiter head;                                    // guarded by lock
    private Waiter tail;                                    // guarded by lock
    /** Withdrawn tickets not yet notified, for signal to skip; null while none. Guarded by lock. */
    private Set<Integer> abandoned;
    /**
     * Tickets a signal notified before their wait was in the list, each with the next ticket to
     * hand out at that signal (the bound of whom it may be passed on to); the wait removes its
     * entry when it finds itself notified. Null while none. Guarded by lock.
     */
    private Map<Integer, Integer> signalledAhead;

    /** A parked wait: its ticket and the semaphore it sleeps on. */
    private static final class Waiter {
        final int ticket;
        final Sema sema = new Sema(0, "sync.Cond.Wait");
        Waiter next;

        Waiter(int ticket) {
            this.ticket = ticket;
        }
    }

    /** A condition variable over l. Go: sync.NewCond */
    public Cond(Mutex l) {
        this.l = Objects.requireNonNull(l, "l");
    }

    /**
     * Unlocks the mutex, waits to be woken by {@link #signal()} or {@link #broadcast()}, and locks
     * the mutex again. The caller must hold the mutex. As in Go, a woken waiter cannot assume the
     * condition it waits for holds: wait in a loop.
     *
     * @throws IllegalStateException when the mutex is not locked (from its {@code unlock()}); the
     *     failed wait leaves nothing behind: no later signal is spent on it
     *     Go: sync/cond.go Cond.Wait
     */
    public void await() {
        int t = notifyListAdd(); // before the unlock: a signal after it is meant for this wait
        try {
            l.unlock();
        } catch (RuntimeException notHeld) {
            notifyListCancel(t); // no wait will hold t: it must not cost a real waiter its signal
            throw notHeld;
        }
        notifyListWait(t);
        l.lock();
    }

    /** Wakes the longest-waiting goroutine, if any. Go: sync/cond.go Cond.Signal */
    public void signal() {
        // Fast path: no waits since the last notification (Go: notifyListNotifyOne).
        if (wait.get() == notify) {
            return;
        }
        Waiter found;
        synchronized (lock) {
            found = notifyOneLocked(wait.get());
        }
        if (found != null) {
            found.sema.release();
        }
    }

    /**
     * Notifies the oldest ticket not yet notified, if it is below bound, skipping withdrawn ones;
     * returns its parked wait to release, or null when that wait is not in the list yet (it will
     * see its ticket notified and not park) or no ticket was left. lock must be held.
     */
    private Waiter notifyOneLocked(int bound) {
        assert Thread.holdsLock(lock);
        for (;;) {
            int t = notify;
            if (!less(t, bound)) {
                return null;
            }
            notify = t + 1;
            if (abandoned != null && abandoned.remove(t)) {
                if (abandoned.isEmpty()) {
                    abandoned = null;
                }
                continue; // a withdrawn ticket: the signal goes to the next one
            }
            for (Waiter p = null, s = head; s != null; p = s, s = s.next) {
                if (s.ticket == t) {
                    Waiter n = s.next;
                    if (p != null) {
                        p.next = n;
                    } else {
                        head = n;
                    }
                    if (n == null) {
                        tail = p;
                    }
                    s.next = null;
                    return s;
                }
            }
            // The wait holding t is not in the list yet: it will see t < notify and not park,
            // unless its await fails, which then passes this signal on (notifyListCancel).
            if (signalledAhead == null) {
                signalledAhead = new HashMap<>();
            }
            signalledAhead.put(t, bound);
            return null;
        }
    }

    /** Wakes every goroutine waiting now. Go: sync/cond.go Cond.Broadcast */
    public void broadcast() {
        if (wait.get() == notify) {
            return;
        }
        Waiter s;
        synchronized (lock) {
            s = head;
            head = null;
            tail = null;
            notify = wait.get();
            abandoned = null; // every ticket is notified now: none is left to skip
        }
        while (s != null) {
            Waiter next = s.next;
            s.next = null;
            s.sema.release();
            s = next;
        }
    }

    /** Takes the next ticket. Go: runtime/sema.go notifyListAdd */
    int notifyListAdd() {
        return wait.getAndIncrement();
    }

    /** Waits until ticket t is notified; returns at once if it already is. Go: runtime/sema.go notifyListWait */
    void notifyListWait(int t) {
        Waiter w;
        synchronized (lock) {
            // Return right away if this ticket has already been notified.
            if (less(t, notify)) {
                forgetSignalledAheadLocked(t);
                return;
            }
            w = new Waiter(t);
            if (tail == null) {
                head = w;
            } else {
                tail.next = w;
            }
            tail = w;
        }
        // A release that lands between the unlock and this acquire is kept by the semaphore.
        w.sema.acquire();
    }

    /**
     * Withdraws ticket t, whose await failed before it could wait: as if it had never been
     * taken. Not yet notified, it is skipped by the signal that reaches it; notified by a signal
     * that took it for a wait about to park, that signal goes on to the oldest ticket handed out
     * before it that still waits to be notified (never to a wait that began after the signal).
     * No Go twin: see the class's notes.
     */
    void notifyListCancel(int t) {
        Waiter found = null;
        synchronized (lock) {
            if (!less(t, notify)) {
                if (abandoned == null) {
                    abandoned = new HashSet<>();
                }
                abandoned.add(t);
                return;
            }
            Integer bound = signalledAhead != null ? signalledAhead.get(t) : null;
            forgetSignalledAheadLocked(t);
            if (bound != null) {
                found = notifyOneLocked(bound);
            }
            // else notified by a broadcast, which woke every wait of its time anyway
        }
        if (found != null) {
            found.sema.release();
        }
    }

    private void forgetSignalledAheadLocked(int t) {
        if (signalledAhead != null && signalledAhead.remove(t) != null && signalledAhead.isEmpty()) {
            signalledAhead = null;
        }
    }

    /** a < b on tickets that wrap around. Go: runtime/sema.go less */
    private static boolean less(int a, int b) {
        return a - b < 0;
    }

    /** Waits parked or about to park now (tickets handed out and not yet notified); a snapshot. */
    int waiting() {
        synchronized (lock) {
            return wait.get() - notify - (abandoned != null ? abandoned.size() : 0);
        }
    }
}
