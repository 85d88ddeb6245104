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
    private G head;
    private G tail;
    private volatile int size;

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
    void put(G gp) {
        assert lock.isHeld() : "globrunq put: sched.lock not held";
        gp.schedlink = null;
        if (tail != null) {
            tail.schedlink = gp;
        } else {
            head = gp;
        }
        tail = gp;
        size = size + 1;
    }

    /** sched.lock must be held. Used only when a P is destroyed, to keep its Gs first. */
    void putHead(G gp) {
        assert lock.isHeld() : "globrunq putHead: sched.lock not held";
        gp.schedlink = head;
        head = gp;
        if (tail == null) {
            tail = gp;
        }
        size = size + 1;
    }

    /** Appends a linked batch first..last of n Gs. sched.lock must be held. */
    void putBatch(G first, G last, int n) {
        assert lock.isHeld() : "globrunq putBatch: sched.lock not held";
        last.schedlink = null;
        if (tail != null) {
            tail.schedlink = first;
        } else {
            head = first;
        }
        tail = last;
        size = size + n;
    }

    /** Pops one G, or null. sched.lock must be held. */
    G get() {
        assert lock.isHeld() : "globrunq get: sched.lock not held";
        G gp = head;
        if (gp == null) {
            return null;
        }
        head = gp.schedlink;
        if (head == null) {
            tail = null;
        }
        gp.schedlink = null;
        SIZE.setRelease(this, size - 1); // see the class comment: only a put must be volatile
        return gp;
    }
}
