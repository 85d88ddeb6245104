package io.gosched.runtime;

/**
 * A FIFO of sudogs whose two ends are fields of the object it queues for, its holder H: a
 * channel holds two (its receivers and its senders, {@link Chan#RECVQ} and {@link Chan#SENDQ}),
 * a {@link Sema} one. Every method needs the holder's lock.
 * Go: runtime/chan.go waitq
 *
 * <p>Why the ends are the holder's fields and not a queue object's. Go's waitq is a struct
 * embedded in hchan; a Java object cannot be embedded, and two queue objects per channel cost 48
 * bytes (two 24-byte objects) and one more cache line touched per operation on a cold channel,
 * where four fields in the channel cost 16. A parked goroutine in the parked row has a channel of
 * its own, so that is 40 bytes of its 684 (issue 20). The queue logic stays written once: each
 * queue is a constant instance of a subclass that says where its two ends are. A caller names
 * its queue by a static final constant, so where C2 inlines these methods the constant's exact
 * class turns the accessors into plain field accesses.
 *
 * <p>Memory order: a channel's heads are release-stored (its setFirst) and acquire-loaded outside
 * the lock by the fast paths of non-blocking operations (Chan.full/empty, which read the fields
 * themselves); everything else is read and written under the lock.
 *
 * <p>The last end is null while the queue holds at most one sudog; the tail is then the first.
 * JVM departure, for G1's write barrier: the holder is usually old and a fresh sudog young, and
 * every such reference store passes a StoreLoad fence in G1's card marking (JDK 25). A channel
 * with one waiter, the common case (a ping-pong or a chain parks one goroutine per channel),
 * then stores one end, not two; a null store has no barrier. (bench/results/NOTES.md,
 * "One store fewer per park")
 */
abstract class WaitQ<H> {

    /** The head, under the lock. */
    abstract Sudog first(H h);

    /** Sets the head (for a channel a release store: its fast paths read the head without the lock). */
    abstract void setFirst(H h, Sudog s);

    /** The last end: null while the queue holds at most one sudog (see the class comment). */
    abstract Sudog last(H h);

    abstract void setLast(H h, Sudog s);

    /** The tail: the last end, or the first while there is at most one. */
    private Sudog tail(H h) {
        Sudog x = last(h);
        return x != null ? x : first(h);
    }

    /** Appends sg. Go: runtime/chan.go waitq.enqueue */
    final void enqueue(H h, Sudog sg) {
        sg.next = null;
        Sudog x = tail(h);
        if (x == null) {
            sg.prev = null;
            setFirst(h, sg);
            return;
        }
        sg.prev = x;
        x.next = sg;
        setLast(h, sg);
    }

    /** Appends sg at the head instead (Sema's lifo queueing). Go: runtime/sema.go semaRoot.queue (lifo) */
    final void enqueueFirst(H h, Sudog sg) {
        Sudog y = first(h);
        sg.prev = null;
        sg.next = y;
        if (y != null) {
            y.prev = sg;
            if (y.next == null) {
                setLast(h, y); // two now: y is the tail
            }
        }
        setFirst(h, sg);
    }

    /**
     * Pops the first sudog that may be taken: a select's or async op's sudog is taken only if
     * its claim succeeds; one whose claim fails (another case won, or the op was withdrawn) is
     * dropped from the queue and skipped.
     * Go: runtime/chan.go waitq.dequeue
     */
    final Sudog dequeue(H h) {
        for (;;) {
            Sudog sg = first(h);
            if (sg == null) {
                return null;
            }
            Sudog y = sg.next;
            if (y == null) {
                setFirst(h, null);
            } else {
                y.prev = null;
                setFirst(h, y);
                if (y.next == null) {
                    setLast(h, null); // one left
                }
                sg.next = null; // mark as removed (see dequeueSudoG)
            }
            if (sg.isSelect && !sg.claim()) {
                continue;
            }
            return sg;
        }
    }

    /**
     * Unlinks sg if it is still queued; tolerates a sudog already removed. Returns whether it
     * was still queued. Go: runtime/select.go waitq.dequeueSudoG
     */
    final boolean dequeueSudoG(H h, Sudog sg) {
        Sudog x = sg.prev;
        Sudog y = sg.next;
        if (x != null) {
            if (y != null) { // middle of queue
                x.next = y;
                y.prev = x;
                sg.next = null;
                sg.prev = null;
                return true;
            }
            x.next = null; // end of queue
            setLast(h, x.prev != null ? x : null); // x alone is the first: no last end
            sg.prev = null;
            return true;
        }
        if (y != null) { // start of queue
            y.prev = null;
            setFirst(h, y);
            if (y.next == null) {
                setLast(h, null); // one left
            }
            sg.next = null;
            return true;
        }
        // x == y == null: either the only element, or already removed.
        if (first(h) == sg) {
            setFirst(h, null);
            return true;
        }
        return false;
    }

    final boolean isEmpty(H h) {
        return first(h) == null;
    }

    final int size(H h) {
        int n = 0;
        for (Sudog s = first(h); s != null; s = s.next) {
            n++;
        }
        return n;
    }
}
