package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/*
 * Padding against false sharing, JCTools style: HotSpot lays out a superclass's fields before
 * its subclass's, so the chain below puts 64+ bytes between head (written by thieves) and tail
 * (written by the owner), and between both and the object's neighbours.
 */
abstract class RunQueuePad0 {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

abstract class RunQueueHead extends RunQueuePad0 {
    /** Next slot to consume. Advanced by CAS by the owner and by thieves. */
    volatile int head;
}

abstract class RunQueuePad1 extends RunQueueHead {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}

abstract class RunQueueTail extends RunQueuePad1 {
    /** Next slot to fill. Written only by the owner, with release stores. */
    volatile int tail;
}

abstract class RunQueuePad2 extends RunQueueTail {
    long p20, p21, p22, p23, p24, p25, p26, p27;
}

/**
 * A P's local run queue: a fixed ring with a single producer (the owner P) and many consumers
 * (the owner and thieves), plus the one-slot {@code runnext}.
 *
 * <p>Indices are free-running ints: {@code tail - head} is the size even across overflow, and a
 * slot is {@code index & mask}.
 *
 * <p>Memory order. The owner writes a slot with a plain store and then publishes it with a
 * release store of {@code tail}; a consumer load-acquires {@code tail} (thieves) or reads its own
 * (owner), reads slots, and claims them with a CAS on {@code head}. A consumer may read a slot
 * the owner is overwriting (after other consumers advanced {@code head} and the ring wrapped),
 * but then its CAS fails because {@code head} moved, and the value read is discarded. This is
 * exactly Go's argument; the Java memory model gives the same guarantees for references.
 *
 * <p>{@code runnext} invariant: only the owner sets it to a G; anyone may CAS it to null.
 *
 * <p>Capacity is a constructor parameter so tests can use a 4-slot queue (Go uses 256).
 *
 * Go: runtime/proc.go runqput, runqget, runqgrab, runqsteal
 */
final class RunQueue extends RunQueuePad2 {

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle RUNNEXT;
    private static final VarHandle RUNNEXT_PUTS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(RunQueueHead.class, "head", int.class);
            TAIL = l.findVarHandle(RunQueueTail.class, "tail", int.class);
            RUNNEXT = l.findVarHandle(Next.class, "g", G.class);
            RUNNEXT_PUTS = l.findVarHandle(RunQueue.class, "runnextPuts", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final G[] ring;
    private final int mask;
    /** Scratch space for runqputslow: half the ring plus the new G. Owner only. */
    final G[] overflowBatch;

    /**
     * What {@link #steal} took: the G to run now and how many Gs it took in all (that one
     * included). Made only when something was stolen; the two answers that took nothing are
     * constants, so a thief that finds nothing allocates nothing.
     */
    record Stolen(G gp, int count) {
        /** Nothing to take. Both constants are told apart by identity. */
        static final Stolen NOTHING = new Stolen(null, 0);
        /**
         * Nothing taken: the victim was running through its runnext (see grab), so it is busy,
         * and the thief should stay around.
         */
        static final Stolen BACKED_OFF = new Stolen(null, 0);
    }
    /** {@link #grab}'s answer when it left runnext to its owner. */
    static final int BACKED_OFF = -1;
    /** Holds runnext; see {@link Next}. Replaced only by the owner, only while runnext is empty. */
    private volatile Next runnext = new Next();
    /** Fills of an empty runnext until {@link #runnext} is replaced. Owner only. */
    private int untilRenewal;
    private final int renewEvery;

    /**
     * The runnext slot (see the class comment: owner sets, anyone CASes to null), in a holder
     * the owner replaces with a fresh, empty one every {@code renewEvery} fills, so that it is
     * nearly always a young object. With G1 on JDK 25 a reference store into an old object from
     * another region passes a StoreLoad fence in the card-marking barrier, and every hand-off
     * stores a G here; a P lives as long as the runtime and is old in any long-lived process.
     *
     * <p>The owner replaces the holder only when it is about to fill an empty runnext, and never
     * writes the old one again. Only the owner fills runnext, and everyone else only empties
     * it, so an old holder stays empty for good. A reader still holding one sees an empty runnext,
     * which was true when it was replaced; a thief's CAS on it finds no G to take. Nothing is
     * lost or duplicated, and the thief's check of {@link #runnextPuts} across its pause is
     * unchanged (the fill that replaces the holder counts as a put).
     */
    private static final class Next {
        volatile G g;
    }
    /**
     * How many times the owner has filled runnext (release store by the owner, acquire load by
     * thieves). A thief that paused before stealing runnext compares it across the pause: a change
     * means the G now in runnext was put there after it looked, so the owner is cycling through
     * runnext and would run that G itself in a moment (see grab).
     */
    private int runnextPuts;

    /*
     * Free slots hold no G. A stale reference in a consumed slot would keep a G that has since
     * parked strongly reachable, and a G parked on a channel nobody can reach must be collectable
     * for leak detection (see AllGs). Go's runq is a guintptr array the collector does not scan;
     * here the owner nulls consumed slots (clearConsumed), since only it may write slots: its own
     * at once (getRing), those thieves took at its next look at the ring (getRing, even when it
     * finds it empty, before going idle) and before every write into it (putTail, steal).
     */
    /** Every slot index below this (and below head) has been nulled. Owner only. */
    private int cleared;

    long q00, q01, q02, q03, q04, q05, q06, q07;

    /**
     * Fills of an empty runnext between two replacements of its holder: one 16-byte allocation
     * and one fenced store per 4,096 hand-offs (the same trade as GlobalRunQueue's and M's).
     */
    static final int RUNNEXT_RENEW_EVERY = 4096;

    RunQueue(int capacity) {
        this(capacity, RUNNEXT_RENEW_EVERY);
    }

    /** renewEvery: fills of an empty runnext between two replacements of its holder (tests use 1). */
    RunQueue(int capacity, int renewEvery) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("run queue capacity must be a power of two >= 2: " + capacity);
        }
        if (renewEvery < 1) {
            throw new IllegalArgumentException("renewEvery must be at least 1: " + renewEvery);
        }
        this.renewEvery = renewEvery;
        this.untilRenewal = renewEvery;
        ring = new G[capacity];
        mask = capacity - 1;
        overflowBatch = new G[capacity / 2 + 1];
    }

    int capacity() {
        return ring.length;
    }

    // ---- accessor vocabulary (JCTools): lv = load-acquire, so = store-release, lp = plain -------
    private int lvHead() {
        return (int) HEAD.getAcquire(this);
    }

    private int lvTail() {
        return (int) TAIL.getAcquire(this);
    }

    private int lpTail() {
        return (int) TAIL.get(this);
    }

    private void soTail(int v) {
        TAIL.setRelease(this, v);
    }

    private boolean casHead(int expect, int update) {
        return HEAD.compareAndSet(this, expect, update);
    }

    private boolean casRunnext(Next nx, G expect, G update) {
        return RUNNEXT.compareAndSet(nx, expect, update);
    }

    /**
     * Puts gp into runnext and returns the G it displaced (to be put at the tail), or null.
     * Executed only by the owner P.
     */
    G putNext(G gp) {
        RUNNEXT_PUTS.setRelease(this, runnextPuts + 1);
        Next nx = runnext;
        for (;;) {
            G old = nx.g;
            if (old == null) {
                if (--untilRenewal == 0) {
                    untilRenewal = renewEvery;
                    runnext = nx = new Next(); // see Next: only while empty
                }
                // Only the owner fills runnext, so an empty runnext stays empty until this store,
                // and a release store publishes gp to a thief's acquire load as the CAS did,
                // without its lock prefix: one serializing instruction fewer per hand-off (Go
                // CASes here too). What the CAS's full fence also gave, that a spinning M about to
                // park sees gp in its last look at the queues, Go's ring put does not give either
                // (a release store of tail): the owner runs gp itself when its current G stops,
                // so a G is never lost, at worst not stolen by an M that was just parking.
                RUNNEXT.setRelease(nx, gp);
                return null;
            }
            if (casRunnext(nx, old, gp)) {
                return old;
            }
        }
    }

    /**
     * Puts gp at the tail if there is room. Returns false when the ring is full; the caller
     * then moves half of it to the global queue ({@code runqputslow}) and retries.
     * Executed only by the owner P.
     */
    boolean putTail(G gp) {
        int h = lvHead(); // load-acquire, sync with consumers
        int t = lpTail();
        if (cleared != h) {
            clearConsumed(h);
        }
        if (t - h < ring.length) {
            ring[t & mask] = gp;
            soTail(t + 1); // store-release, makes the slot available for consumption
            return true;
        }
        return false;
    }

    /**
     * Nulls the slots consumed since the last call, up to h, a head value read by the owner. Must
     * run before the owner writes a slot computed from h: a consumed slot not yet cleared could
     * otherwise be reused for a live G and then nulled. Safe against consumers: a consumer reading a
     * slot below head holds an old head, and its CAS on head fails. Executed only by the owner P.
     */
    private void clearConsumed(int h) {
        for (int i = cleared; i != h; i++) {
            ring[i & mask] = null;
        }
        cleared = h;
    }

    /**
     * Claims the older half of a full ring for the global queue: copies it into batch and
     * advances head. Returns the number taken, or 0 when a consumer raced and the ring may no
     * longer be full (the caller retries {@link #putTail}).
     * Executed only by the owner P.
     */
    int grabHalfForOverflow(G[] batch) {
        int h = lvHead();
        int t = lpTail();
        int n = (t - h) / 2;
        if (n != ring.length / 2) {
            return 0; // not full any more
        }
        for (int i = 0; i < n; i++) {
            batch[i] = ring[(h + i) & mask];
        }
        if (!casHead(h, h + n)) {
            java.util.Arrays.fill(batch, 0, n, null); // the batch array is reused: drop references
            return 0;
        }
        return n;
    }

    /**
     * Takes runnext if set. A failed CAS is not retried: only a thief can have cleared it.
     * Executed only by the owner P.
     */
    G getNext() {
        Next nx = runnext;
        G g = nx.g;
        if (g != null && casRunnext(nx, g, null)) {
            return g;
        }
        return null;
    }

    /** Takes the oldest G of the ring, or null. Executed only by the owner P. */
    G getRing() {
        for (;;) {
            int h = lvHead(); // load-acquire, sync with other consumers
            int t = lpTail();
            if (t == h) {
                if (cleared != h) {
                    clearConsumed(h); // what thieves took: an owner about to go idle must not keep it
                }
                return null;
            }
            G gp = ring[h & mask];
            if (casHead(h, h + 1)) { // cas-release, commits consume
                clearConsumed(h + 1); // this slot and any thieves took before it: see "Free slots hold no G"
                return gp;
            }
        }
    }

    /**
     * Is the queue empty? Never reports empty spuriously while the owner moves a G between
     * runnext and the ring: tail is re-read to make sure the three reads saw one moment.
     * Can be executed by any P.
     */
    boolean isEmpty() {
        for (;;) {
            int h = lvHead();
            int t = lvTail();
            G nextG = runnext.g;
            if (t == lvTail()) {
                return h == t && nextG == null;
            }
        }
    }

    /** Approximate number of Gs, runnext included. Can be executed by any P. */
    int size() {
        int n = lvTail() - lvHead();
        if (n < 0) {
            n = 0;
        } else if (n > ring.length) {
            n = ring.length;
        }
        return n + (runnext.g != null ? 1 : 0);
    }

    /** Whether the ring (runnext aside) looks empty; racy. Can be executed by any P. */
    boolean ringLooksEmpty() {
        return lvTail() - lvHead() <= 0;
    }

    /** The G in runnext, for scheddetail. Can be executed by any P. */
    G peekNext() {
        return runnext.g;
    }

    /**
     * Grabs half (rounded up) of this queue's Gs into the thief's ring starting at thiefHead,
     * or, on the last pass, runnext when the ring is empty. Returns the number grabbed, or
     * {@link #BACKED_OFF} when it left runnext to its owner because the owner refilled it during
     * the pause. Can be executed by any P (the thief owns {@code into}).
     *
     * @param victimRunning whether the victim P is running: then, before taking its runnext, the
     *                      thief waits ~3 µs so the victim can run its own runnext first
     */
    int grab(G[] into, int intoMask, int thiefHead, boolean stealRunNext, boolean victimRunning) {
        for (;;) {
            int h = lvHead(); // load-acquire, sync with other consumers
            int t = lvTail(); // load-acquire, sync with the producer
            int n = t - h;
            n = n - n / 2;
            if (n == 0) {
                if (stealRunNext) {
                    Next nx = runnext;
                    G nextG = nx.g;
                    if (nextG != null) {
                        // Not linearizable as "ring first": the owner may refill the ring
                        // between our read of tail and this CAS, and we still take runnext.
                        // Nothing is lost or duplicated (the CAS decides), as in Go.
                        if (victimRunning) {
                            // The victim is likely about to run this G itself (a ping-pong pair
                            // shuttling through runnext); stealing it now would bounce it
                            // between Ps. Go sleeps 3 µs here.
                            int puts = (int) RUNNEXT_PUTS.getAcquire(this);
                            briefPause(3_000);
                            if ((int) RUNNEXT_PUTS.getAcquire(this) != puts) {
                                // Go's CAS below would succeed whenever the same G happens to be
                                // back in runnext (a ping-pong pair puts each of its two Gs there
                                // every round trip), and bounce the pair between Ps. A new put
                                // during our pause shows the owner is running through runnext:
                                // leave it alone, as the pause meant to.
                                return BACKED_OFF;
                            }
                        }
                        if (!casRunnext(nx, nextG, null)) {
                            continue;
                        }
                        into[thiefHead & intoMask] = nextG;
                        return 1;
                    }
                }
                return 0;
            }
            if (n > ring.length / 2) { // read inconsistent h and t
                continue;
            }
            for (int i = 0; i < n; i++) {
                into[(thiefHead + i) & intoMask] = ring[(h + i) & mask];
            }
            if (casHead(h, h + n)) { // cas-release, commits consume
                return n;
            }
            for (int i = 0; i < n; i++) {
                into[(thiefHead + i) & intoMask] = null; // the thief's free slots hold no G
            }
        }
    }

    /**
     * Steals half of victim's Gs into this queue. Returns one of them to run now (the last
     * grabbed), publishing the others, with the count; or {@link Stolen#NOTHING} or
     * {@link Stolen#BACKED_OFF}.
     * Executed only by the owner P (the thief).
     * Go: runtime/proc.go runqsteal
     */
    Stolen steal(RunQueue victim, boolean stealRunNext, boolean victimRunning) {
        int t = lpTail();
        int h0 = lvHead();
        if (cleared != h0) {
            clearConsumed(h0); // before grab writes our slots
        }
        int n = victim.grab(ring, mask, t, stealRunNext, victimRunning);
        if (n <= 0) {
            return n == BACKED_OFF ? Stolen.BACKED_OFF : Stolen.NOTHING;
        }
        Stolen stolen = new Stolen(ring[(t + n - 1) & mask], n);
        n--;
        ring[(t + n) & mask] = null; // returned to run now, not published: its slot stays free
        if (n == 0) {
            return stolen;
        }
        int h = lvHead();
        if (t - h + n >= ring.length) {
            throw new IllegalStateException("runqsteal: runq overflow");
        }
        soTail(t + n); // store-release, makes the stolen Gs available for consumption
        return stolen;
    }

    /**
     * Empties the queue (runnext first, then the ring in order) into out; returns the count.
     * Used when a P is destroyed by procresize, with the world stopped.
     * Go: runtime/proc.go runqdrain
     */
    int drain(G[] out) {
        int n = 0;
        G next = getNext();
        if (next != null) {
            out[n++] = next;
        }
        for (G gp; (gp = getRing()) != null; ) {
            out[n++] = gp;
        }
        return n;
    }

    /*
     * Why the pause sleeps instead of spinning. Go calls usleep(3) here on Linux, and Linux rounds
     * such a sleep up by the thread's timer slack (50 µs by default): the thief really steps aside
     * for tens of microseconds, and stays a spinning M all that time. That is what keeps a
     * ping-pong pair cheap with an idle P around: while the thief sleeps, nmspinning stays 1, so
     * each goready's wakep returns at once instead of waking an M through a futex. A 3 µs busy
     * spin ended the thief's round (and its spinning) quickly, so the next hand-off paid an M
     * wake-up; measured on the 2-P ping-pong, that was 74k context switches a second against Go's
     * 9k. parkNanos sleeps the same way usleep does.
     */
    private static void briefPause(long nanos) {
        java.util.concurrent.locks.LockSupport.parkNanos(nanos);
    }
}
