package io.gosched.runtime;

/**
 * The global run queue: a FIFO of Gs linked through {@link G#schedlink}.
 *
 * <p>sched.lock must be held for every method except {@link #size()}, which is a racy volatile
 * read used for the lock-free "is there anything?" checks, as Go reads sched.runq.size.
 * The volatile size matters for the spinning protocol: a submitter writes it (volatile) before
 * reading nmspinning (volatile), a spinner decrements nmspinning before reading it, and the
 * total order of volatile accesses rules out both missing each other.
 *
 * Go: runtime/proc.go globrunqput, globrunqputhead, globrunqputbatch, globrunqget
 */
final class GlobalRunQueue {
    private G head;
    private G tail;
    private volatile int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** sched.lock must be held. */
    void put(G gp) {
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
        gp.schedlink = head;
        head = gp;
        if (tail == null) {
            tail = gp;
        }
        size = size + 1;
    }

    /** Appends a linked batch first..last of n Gs. sched.lock must be held. */
    void putBatch(G first, G last, int n) {
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
        G gp = head;
        if (gp == null) {
            return null;
        }
        head = gp.schedlink;
        if (head == null) {
            tail = null;
        }
        gp.schedlink = null;
        size = size - 1;
        return gp;
    }
}
