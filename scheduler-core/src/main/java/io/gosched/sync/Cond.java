package io.gosched.sync;

import io.gosched.runtime.Sema;
import java.util.Objects;
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
     * Comparisons are on 32-bit tickets with wrap-around (Go's less()).
     */
    private final Mutex l;
    private final AtomicInteger wait = new AtomicInteger(); // ticket of the next waiter; incremented outside lock
    private volatile int notify;                            // ticket of the next waiter to wake; written under lock
    private final Object lock = new Object();
    private Waiter head;                                    // guarded by lock
    private Waiter tail;                                    // guarded by lock

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
     * @throws IllegalStateException when the mutex is not locked (from its {@code unlock()})
     *     Go: sync/cond.go Cond.Wait
     */
    public void await() {
        int t = notifyListAdd(); // before the unlock: a signal after it is meant for this wait
        l.unlock();
        notifyListWait(t);
        l.lock();
    }

    /** Wakes the longest-waiting goroutine, if any. Go: sync/cond.go Cond.Signal */
    public void signal() {
        // Fast path: no waits since the last notification (Go: notifyListNotifyOne).
        if (wait.get() == notify) {
            return;
        }
        Waiter found = null;
        synchronized (lock) {
            int t = notify;
            if (t == wait.get()) {
                return;
            }
            notify = t + 1;
            // The wait holding t may not be in the list yet: then it sees t < notify and does not park.
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
                    found = s;
                    break;
                }
            }
        }
        if (found != null) {
            found.sema.release();
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

    /** a < b on tickets that wrap around. Go: runtime/sema.go less */
    private static boolean less(int a, int b) {
        return a - b < 0;
    }

    /** Waits parked or about to park now (tickets handed out and not yet notified); a snapshot. */
    int waiting() {
        return wait.get() - notify;
    }
}
