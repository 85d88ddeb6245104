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
 * <p>One Ref per G, created with it and retired when the goroutine exits ({@link #retire}): a
 * retired Ref is cleared, so the collection of its dead G is no leak, and only a parked G's Ref
 * is ever enqueued.
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
        // new G's Ref before its creator has written all of them, which a snapshot can afford.
        long goid;
        long parentGoid;
        Map<String, String> labels = Map.of();
        StackTraceElement createdAt;
        /** The wait reason of the last park (WaitReason code), written when a park's reason changes (G.setWaitreason). */
        byte waitreason;
        /** Neighbours in the list of all Refs; both null once unlinked (or never linked). Guarded by AllGs.lock. */
        private Ref prev, next;
        /**
         * PENDING in a P's buffer, LINKED in the list, or RETIRED; changed by CAS (STATE). A byte:
         * with the wait reason beside it the Ref is 64 bytes, as an int it was 72.
         */
        private volatile byte state;

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
     * held for a few instructions. Each Ref is linked once and unlinked once, when it is retired
     * or found collected.
     *
     * Why a P links and unlinks in batches. Every goroutine's G is new (Scheduler.newG), so a Ref
     * is linked and unlinked per goroutine, often by two Ps (made on one, exiting on the other).
     * One lock acquisition per link and per unlink was the largest cost of a spawn: the lock's
     * and the list head's cache lines bounced between the cores at every goroutine (measured,
     * spawn 357 ns against 201 ns with no list at all). A P's new Refs wait in its pending
     * buffer and its retired ones in its retired buffer, BATCH of them linked or unlinked under
     * one acquisition. A Ref's state says where it is: whoever moves it out of PENDING by CAS
     * (the flush, a retire from any P, or poll for a leak) decides its fate, so a Ref retired
     * while still in another P's buffer is never linked. A buffer holds its Refs strongly, as the
     * list does, and snapshots read the pending buffers too.
     */

    /** Guards the links, head's included, and count. Never held across a yield or user code. */
    private final RuntimeLock lock = new RuntimeLock();
    /** The sentinel of the circular list of linked Refs (its own referent is null). */
    private final Ref head = new Ref(null, null);
    /** Every P's buffers (Ps are never dropped, only marked dead); replaced under lock. */
    private volatile Buffers[] allBuffers = new Buffers[0];
    /** Refs a P links or unlinks under one acquisition of the lock. */
    static final int BATCH = 32;
    static final byte PENDING = 0, LINKED = 1, RETIRED = 2;
    private static final java.lang.invoke.VarHandle STATE;
    private static final java.lang.invoke.VarHandle PENDING_SLOT = java.lang.invoke.MethodHandles.arrayElementVarHandle(Ref[].class);

    static {
        try {
            STATE = java.lang.invoke.MethodHandles.lookup().findVarHandle(Ref.class, "state", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
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

    /**
     * A new Ref for g. With a P's buffers it goes into the P's pending buffer, linked with the
     * next BATCH of that P's new Gs under one lock; without (a G made outside the runtime's
     * Ps), it is linked now. Executed by the owner of buffers (the M holding that P), or any
     * thread with null.
     */
    Ref add(G g, Buffers buffers) {
        Ref r = new Ref(g, collected);
        if (buffers == null) {
            lock.lock();
            link(r);
            lock.unlock();
            return r;
        }
        PENDING_SLOT.setRelease(buffers.pending, buffers.npending, r); // a snapshot reads the slot
        if (++buffers.npending == BATCH) {
            flushPending(buffers);
        }
        return r;
    }

    private void flushPending(Buffers buffers) {
        Ref[] pending = buffers.pending;
        lock.lock();
        for (int i = 0; i < buffers.npending; i++) {
            Ref r = pending[i];
            if (STATE.compareAndSet(r, PENDING, LINKED)) { // else retired or reported meanwhile
                link(r);
            }
            pending[i] = null; // under the lock: a snapshot sees r in the buffer or in the list
        }
        lock.unlock();
        buffers.npending = 0;
    }

    /** Guarded by lock; r is LINKED. */
    private void link(Ref r) {
        r.state = LINKED;
        Ref first = head.next;
        r.prev = head;
        r.next = first;
        first.prev = r;
        head.next = r;
        count = count + 1;
    }

    /** Guarded by lock. Unlinks r if it is linked; false if it was not (retired already). */
    private boolean unlinkLocked(Ref r) {
        Ref p = r.prev, n = r.next;
        if (p == null) {
            return false;
        }
        p.next = n;
        n.prev = p;
        r.prev = null;
        r.next = null;
        r.state = RETIRED;
        count = count - 1;
        return true;
    }

    /**
     * Takes r out of the books: whoever wins the CAS out of PENDING owns it; a LINKED Ref is
     * unlinked under the lock. False if r was retired or taken out already.
     */
    private boolean takeOut(Ref r) {
        if (STATE.compareAndSet(r, PENDING, RETIRED)) {
            return true; // the flush of its buffer skips it
        }
        lock.lock();
        boolean linked = unlinkLocked(r);
        lock.unlock();
        return linked;
    }

    /**
     * Drops the Ref of a dead G, so its collection is no leak. With the exiting P's buffers a
     * linked Ref waits in the P's retired buffer and the next BATCH are unlinked under one lock;
     * until then a snapshot skips it (its referent is cleared). Executed by the owner of
     * buffers, or any thread with null.
     */
    void retire(Ref r, Buffers buffers) {
        r.clear(); // a cleared reference is not enqueued by the collector
        if (STATE.compareAndSet(r, PENDING, RETIRED)) {
            return; // never linked: the flush of its buffer skips it
        }
        if (buffers == null) {
            lock.lock();
            unlinkLocked(r);
            lock.unlock();
            return;
        }
        buffers.retired[buffers.nretired] = r;
        if (++buffers.nretired == BATCH) {
            flushRetired(buffers);
        }
    }

    private void flushRetired(Buffers buffers) {
        Ref[] retired = buffers.retired;
        lock.lock();
        for (int i = 0; i < buffers.nretired; i++) {
            unlinkLocked(retired[i]);
            retired[i] = null;
        }
        lock.unlock();
        buffers.nretired = 0;
    }

    /** Links buffers' pending Refs and unlinks its retired ones now. Executed by the owner of buffers. */
    void flush(Buffers buffers) {
        flushPending(buffers);
        flushRetired(buffers);
    }

    /**
     * A P's two buffers: its new Refs not linked yet, and its retired Refs not unlinked yet.
     * Written only by the M holding the P; the pending one is read by snapshots (slots by
     * acquire, under the lock, which a flush holds too). A buffer keeps its Refs strongly
     * reachable as the list does, so a leak is reported whichever of the two holds the Ref.
     */
    static final class Buffers {
        final Ref[] pending = new Ref[BATCH];
        int npending;
        final Ref[] retired = new Ref[BATCH];
        int nretired;
    }

    /** New buffers for a new P, registered so that snapshots look into them. Any thread. */
    Buffers newBuffers() {
        Buffers b = new Buffers();
        lock.lock();
        Buffers[] old = allBuffers;
        Buffers[] grown = java.util.Arrays.copyOf(old, old.length + 1);
        grown[old.length] = b;
        allBuffers = grown;
        lock.unlock();
        return b;
    }

    /**
     * The Gs still alive (any status), weakly: a G collected meanwhile is skipped. Holds the lock
     * for the walk (about 5 ns a goroutine), during which a P's flush of its buffers waits.
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
            for (Buffers b : allBuffers) {
                for (int i = 0; i < BATCH; i++) {
                    Ref r = (Ref) PENDING_SLOT.getAcquire(b.pending, i);
                    G g = r != null && r.state == PENDING ? r.get() : null;
                    if (g != null) {
                        out.add(g);
                    }
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
            if (!takeOut(r)) {
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
