package io.gosched.runtime;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every G of one runtime, held weakly, and the goroutines the garbage collector found leaked.
 *
 * <p>Go keeps {@code allgs}, a strong list, and since Go 1.26 its GC finds goroutines blocked on
 * a channel or sync object that no running goroutine can reach ({@code goroutineleak}). Here the
 * JVM's collector does the reachability part: the runtime holds a parked G only through what it
 * waits on (the channel's or semaphore's sudog queue, the timer heap for a sleep, the poller for
 * I/O); nothing else keeps a strong reference to a WAITING G (run-queue slots are cleared once
 * taken, {@code M.curg} is cleared when the G yields, the trace stores only goids). So a G parked
 * on a channel that only it (or other such goroutines) can reach is itself unreachable; the
 * collector clears its {@link Ref} and enqueues it, and {@link #poll} turns the Ref into a leak
 * report. This list therefore holds {@link Ref}s, weak references that carry the facts a report
 * needs, since the G itself is gone by then.
 *
 * <p>One Ref per G object, created with it and kept when the G is recycled through the free lists:
 * a dead G sits on a free list (strongly held), so only a parked G can be collected. The one place
 * a dead G is dropped, an exit on an M without a P, retires its Ref first ({@link #retire}).
 *
 * <p>A goroutine wired to its thread by {@code Go.lockOSThread} parks with its frames mounted on
 * that thread, a GC root: it is never reported. Neither is one blocked on something a live thread
 * or goroutine can still reach, since that keeps the sudog, and the G, reachable.
 *
 * Go: runtime/proc.go allgs; runtime/mgc.go goroutine leak detection (Go 1.26)
 */
final class AllGs {

    /**
     * A weak reference to one G with what outlives it. goid, parentGoid, labels and createdAt are
     * written by the creating M before the G is queued (newproc), waitreason at every park; a
     * leak report reads them after the collector cleared the referent.
     */
    static final class Ref extends WeakReference<G> {
        // Plain fields: written by the creating M before the G is queued. A leak report reads them
        // after a collection (a safepoint: every earlier write is visible); a dump may read a
        // recycled G's previous values for a moment, which a snapshot can afford.
        long goid;
        long parentGoid;
        Map<String, String> labels = Map.of();
        StackTraceElement createdAt;
        /** The wait reason of the last park (WaitReason code), written when a park's reason changes (G.setWaitreason). */
        byte waitreason;
        /** Neighbours in the list of all Refs; both null once unlinked (or never linked). Guarded by AllGs.lock. */
        private Ref prev, next;

        Ref(G g, ReferenceQueue<G> q) {
            super(g, q);
        }
    }

    /*
     * Why an intrusive list and not a concurrent set. The list's only jobs are to keep every Ref
     * strongly reachable (a WeakReference that nobody holds is never enqueued, so a leak would go
     * unreported) and to be walked by a dump. A ConcurrentHashMap key set did both at 42 bytes per
     * goroutine (its node, 32, and its share of the table, ~10) and a hash insert at every new G;
     * two links in the Ref cost 8 bytes (the Ref grows from 56 to 64) and four stores under a lock
     * held for a few instructions. Each Ref is linked once, when its G is made, and unlinked once,
     * when it is retired or found collected; Gs recycled through the free lists keep theirs, so in
     * a steady state nothing is linked at all.
     */

    /** Guards the links, head's included, and count. Never held across a yield or user code. */
    private final RuntimeLock lock = new RuntimeLock();
    /** The sentinel of the circular list of linked Refs (its own referent is null). */
    private final Ref head = new Ref(null, null);
    /** Refs linked now; written under lock, read racily by size(). */
    private volatile int count;
    private final ReferenceQueue<G> collected = new ReferenceQueue<>();
    /** The most leak reports kept; older ones are dropped (leakedTotal still counts them). */
    static final int MAX_LEAK_REPORTS = 10_000;

    private final java.util.ArrayDeque<GoroutineInfo> leaked = new java.util.ArrayDeque<>(); // guarded by itself
    /** Leaked goroutines found so far (Go's goroutineleak profile count); never decreases. */
    final AtomicLong leakedTotal = new AtomicLong();

    AllGs() {
        head.prev = head;
        head.next = head;
    }

    /** Registers a new G object. Can be executed by any thread. */
    Ref add(G g) {
        Ref r = new Ref(g, collected);
        lock.lock();
        Ref first = head.next;
        r.prev = head;
        r.next = first;
        first.prev = r;
        head.next = r;
        count = count + 1;
        lock.unlock();
        return r;
    }

    /** Unlinks r; false if it was not linked (retired already). */
    private boolean unlink(Ref r) {
        lock.lock();
        Ref p = r.prev, n = r.next;
        boolean linked = p != null;
        if (linked) {
            p.next = n;
            n.prev = p;
            r.prev = null;
            r.next = null;
            count = count - 1;
        }
        lock.unlock();
        return linked;
    }

    /** Drops the Ref of a dead G that no free list will hold, so its collection is no leak. */
    void retire(Ref r) {
        r.clear(); // a cleared reference is not enqueued by the collector
        unlink(r);
    }

    /**
     * The Gs still alive (any status), weakly: a G collected meanwhile is skipped. Holds the lock
     * for the walk (about 5 ns a goroutine), during which new Gs wait; recycled ones do not.
     */
    List<G> snapshot() {
        List<G> out = new ArrayList<>(count);
        lock.lock();
        try {
            for (Ref r = head.next; r != head; r = r.next) {
                G g = r.get();
                if (g != null) {
                    out.add(g);
                }
            }
        } finally {
            lock.unlock();
        }
        return out;
    }

    /**
     * Turns every Ref the collector enqueued into a leak report. Cheap when nothing was collected
     * (ReferenceQueue.poll reads one field). Can be executed by any thread.
     */
    void poll() {
        java.lang.ref.Reference<? extends G> x;
        while ((x = collected.poll()) != null) {
            Ref r = (Ref) x;
            if (!unlink(r)) {
                continue; // retired
            }
            WaitReason reason = WaitReason.of(r.waitreason);
            GoroutineInfo info = new GoroutineInfo(r.goid, GoroutineInfo.State.WAITING, reason != null ? reason.toString() : "",
                    java.time.Duration.ZERO, r.labels, List.of(), r.parentGoid, r.createdAt);
            synchronized (leaked) {
                if (leaked.size() == MAX_LEAK_REPORTS) {
                    leaked.removeFirst();
                }
                leaked.addLast(info);
            }
            leakedTotal.incrementAndGet();
        }
    }

    /** The leak reports so far, oldest first. */
    List<GoroutineInfo> leaked() {
        poll();
        synchronized (leaked) {
            return List.copyOf(leaked);
        }
    }

    /** The number of G objects registered, collected ones not yet polled included. */
    int size() {
        return count;
    }
}
