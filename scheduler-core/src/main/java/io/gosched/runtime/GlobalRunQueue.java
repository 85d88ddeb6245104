package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The global run queue: a FIFO of Gs linked through {@link G#schedlink}.
 *
 * <p>sched.lock must be held for every method except {@link #size()}, which is a racy volatile
 * read used for the lock-free "is there anything?" checks, as Go reads sched.runq.size.
 * The volatile size matters for the spinning protocol: a submitter writes it (volatile) before
 * reading nmspinning (volatile), a spinner decrements nmspinning before reading it, and the
 * total order of volatile accesses rules out both missing each other. A take lowers the size
 * with a release store instead (no StoreLoad fence): a smaller size cannot be what a wake-up
 * waits for, and a reader that still sees the larger one takes the lock and finds the truth.
 *
 * Go: runtime/proc.go globrunqput, globrunqputhead, globrunqputbatch, globrunqget
 */
final class GlobalRunQueue {
    /** sched.lock, for the checks of "sched.lock must be held". */
    private final RuntimeLock lock;
    /** head and tail, in a holder that {@link #ends()} replaces now and then; see {@link Ends}. */
    private Ends ends = new Ends();
    /** Operations until ends is replaced. sched.lock held. */
    private int untilRenewal = RENEW_EVERY;
    private volatile int size;

    /**
     * The queue's two ends. Replaced by a fresh copy every {@value #RENEW_EVERY} operations so
     * that it is nearly always a young object: with G1 on JDK 25, a reference store into an old
     * object from another region passes a StoreLoad fence in the card-marking barrier, and a
     * store into a young one does not. The queue itself lives as long as the runtime, so after
     * a few collections (or any full one) it is old; a yield puts and takes a G here each time.
     */
    private static final class Ends {
        G head;
        G tail;
    }

    private static final int RENEW_EVERY = 4096;

    private static final VarHandle SIZE;

    static {
        try {
            SIZE = MethodHandles.lookup().findVarHandle(GlobalRunQueue.class, "size", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    GlobalRunQueue(RuntimeLock lock) {
        this.lock = lock;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** sched.lock must be held. */
    /** The current ends, replaced by a fresh copy when its turn comes. sched.lock held. */
    private Ends ends() {
        Ends e = ends;
        if (--untilRenewal == 0) {
            untilRenewal = RENEW_EVERY;
            Ends fresh = new Ends();
            fresh.head = e.head;
            fresh.tail = e.tail;
            ends = e = fresh;
        }
        return e;
    }

    void put(G gp) {
        assert lock.isHeld() : "globrunq put: sched.lock not held";
        Ends e = ends();
        gp.schedlink = null;
        if (e.tail != null) {
            e.tail.schedlink = gp;
        } else {
            e.head = gp;
        }
        e.tail = gp;
        size = size + 1;
    }

    /** sched.lock must be held. Used only when a P is destroyed, to keep its Gs first. */
    void putHead(G gp) {
        assert lock.isHeld() : "globrunq putHead: sched.lock not held";
        Ends e = ends();
        gp.schedlink = e.head;
        e.head = gp;
        if (e.tail == null) {
            e.tail = gp;
        }
        size = size + 1;
    }

    /** Appends a linked batch first..last of n Gs. sched.lock must be held. */
    void putBatch(G first, G last, int n) {
        assert lock.isHeld() : "globrunq putBatch: sched.lock not held";
        Ends e = ends();
        last.schedlink = null;
        if (e.tail != null) {
            e.tail.schedlink = first;
        } else {
            e.head = first;
        }
        e.tail = last;
        size = size + n;
    }

    /** Pops one G, or null. sched.lock must be held. */
    G get() {
        assert lock.isHeld() : "globrunq get: sched.lock not held";
        Ends e = ends();
        G gp = e.head;
        if (gp == null) {
            return null;
        }
        e.head = gp.schedlink;
        if (e.head == null) {
            e.tail = null;
        }
        gp.schedlink = null;
        SIZE.setRelease(this, size - 1); // see the class comment: only a put must be volatile
        return gp;
    }
}
