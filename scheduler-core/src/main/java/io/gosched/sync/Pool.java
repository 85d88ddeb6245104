package io.gosched.sync;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * A set of temporary objects that may be reused, Go's {@code sync.Pool}: {@link #get()} returns some
 * object previously {@link #put(Object) put} (or a new one from the factory); the pool may drop any
 * object at any time. Safe for concurrent use by goroutines and platform threads.
 *
 * <p>Layout, as in Go: each P (of each runtime using the pool) has a private slot (used only by the
 * goroutine running on that P, with the P pinned) and a shared ring that its owner pushes to and pops from at the head while other Ps
 * steal from the tail. Platform threads, which have no P, share one extra lock-free queue.
 *
 * <p>Victim cache and its schedule. Go moves every pool's objects to a victim cache at each garbage
 * collection and drops the previous victims, so an unused object survives at most two GC cycles. The
 * JVM offers no hook at a stop-the-world point, so here a single daemon thread,
 * {@code gosched-pool-cleanup}, runs {@link #poolCleanup()} every {@link #CLEANUP_INTERVAL_MS}
 * milliseconds (system property {@code gosched.pool.cleanupMillis}, default 2000): an object not
 * taken again is dropped after two to three intervals. The thread is started with the first Pool,
 * holds pools only weakly, and lives as long as the JVM (like the GC it stands in for). Because the
 * cleanup runs concurrently with pool users instead of with the world stopped, a Put racing with it
 * may land in the fresh victim generation; that object is merely aged one step early.
 *
 * <p>Go: sync/pool.go, sync/poolqueue.go
 */
public final class Pool<T> {
    /** Period of the victim-cache cleanup, in milliseconds. */
    static final long CLEANUP_INTERVAL_MS = Long.getLong("gosched.pool.cleanupMillis", 2000L);

    private final Supplier<T> factory;
    /** The current generation (Go's local/localSize). Replaced by poolCleanup. */
    private volatile Locals local;
    /** The previous generation (Go's victim/victimSize); null once found empty or after the next cleanup. */
    private volatile Locals victim;

    /** A pool whose {@link #get()} falls back to {@code factory} (which may be null: then get may return null). */
    public Pool(Supplier<T> factory) {
        this.factory = factory;
        this.local = new Locals();
        register(this);
    }

    /** Adds x to the pool (null is ignored). Go: sync/pool.go Pool.Put */
    public void put(T x) {
        if (x == null) {
            return;
        }
        int pid = Go.procPin();
        try {
            if (pid < 0) {
                local.unpinned.offer(x);
                return;
            }
            PoolLocal l = pin(Go.runtime(), pid);
            if (l.privateObj == null) {
                l.privateObj = x;
            } else {
                l.shared.pushHead(x); // a full ring drops x: a pool may drop anything
            }
        } finally {
            if (pid >= 0) {
                Go.procUnpin();
            }
        }
    }

    /**
     * Takes some object from the pool, or one from the factory when the pool is empty.
     * Go: sync/pool.go Pool.Get
     */
    @SuppressWarnings("unchecked")
    public T get() {
        int pid = Go.procPin();
        Object x;
        try {
            if (pid < 0) {
                x = local.unpinned.poll();
                if (x == null) {
                    x = getSlow(null, -1);
                }
            } else {
                GoRuntime rt = Go.runtime();
                PoolLocal l = pin(rt, pid);
                x = l.privateObj;
                l.privateObj = null;
                if (x == null) {
                    // Try to pop the head of the local shard. We prefer the head over the tail for
                    // temporal locality of reuse.
                    x = l.shared.popHead();
                    if (x == null) {
                        x = getSlow(rt, pid);
                    }
                }
            }
        } finally {
            if (pid >= 0) {
                Go.procUnpin();
            }
        }
        if (x == null && factory != null) {
            x = factory.get();
        }
        return (T) x;
    }

    /**
     * P pid of rt is pinned (or pid < 0: a platform thread, rt null). Steals from the other Ps
     * of rt, then from the victims.
     * Go: sync/pool.go Pool.getSlow
     */
    private Object getSlow(GoRuntime rt, int pid) {
        // Try to steal one element from other procs.
        Locals cur = local;
        PoolLocal[] ps = rt != null ? cur.ps(rt) : NO_LOCALS;
        int size = ps.length;
        int start = Math.max(pid, 0);
        for (int i = 0; i < size; i++) {
            PoolLocal l = ps[(start + i + 1) % size];
            if (l == null) {
                continue;
            }
            Object x = l.shared.popTail();
            if (x != null) {
                return x;
            }
        }
        if (pid >= 0) {
            Object x = cur.unpinned.poll();
            if (x != null) {
                return x;
            }
        }
        // Try the victim cache. We do this after attempting to steal from all primary caches because
        // we want objects in the victim cache to age out if at all possible.
        Locals v = victim;
        if (v == null) {
            return null;
        }
        ps = rt != null ? v.ps(rt) : NO_LOCALS;
        size = ps.length;
        if (pid >= 0 && pid < size && ps[pid] != null) {
            PoolLocal l = ps[pid];
            Object x = l.privateObj;
            if (x != null) {
                l.privateObj = null;
                return x;
            }
        }
        for (int i = 0; i < size; i++) {
            PoolLocal l = ps[(start + i) % size];
            if (l == null) {
                continue;
            }
            Object x = l.shared.popTail();
            if (x != null) {
                return x;
            }
        }
        Object x = v.unpinned.poll();
        if (x != null) {
            return x;
        }
        // Mark the victim cache as empty for future gets; don't bother with it. Only when it names
        // no other runtime: rt found nothing of its own there, but another runtime's victims are
        // still theirs to take until the next cleanup (marked empty here, one runtime's miss
        // dropped another's objects a generation early).
        if (namesOnly(v, rt)) {
            victim = null;
        }
        return null;
    }

    /** True if every shard of generation g belongs to rt (or g has none). */
    private static boolean namesOnly(Locals g, GoRuntime rt) {
        for (Shard sh : g.shards) {
            if (sh.runtime != rt) {
                return false;
            }
        }
        return true;
    }

    /**
     * The calling goroutine has pinned P pid of rt. Returns its PoolLocal, growing rt's array
     * when pid is beyond it (the first use on this P, or after GOMAXPROCS grew).
     * Go: sync/pool.go Pool.pin, Pool.pinSlow
     */
    private PoolLocal pin(GoRuntime rt, int pid) {
        PoolLocal[] ps = local.ps(rt);
        if (pid < ps.length) {
            PoolLocal p = ps[pid];
            if (p != null) {
                return p;
            }
        }
        return pinSlow(rt, pid);
    }

    private synchronized PoolLocal pinSlow(GoRuntime rt, int pid) {
        // synchronized does not yield: the goroutine stays pinned and no continuation is parked
        // holding the monitor. Contention here happens once per P per runtime per generation.
        Locals l = local;
        PoolLocal[] ps = l.ps(rt);
        if (pid >= ps.length) {
            PoolLocal[] grown = new PoolLocal[Math.max(pid + 1, rt.gomaxprocs())];
            System.arraycopy(ps, 0, grown, 0, ps.length);
            l.setPs(rt, grown);
            ps = grown;
        }
        PoolLocal p = ps[pid];
        if (p == null) {
            p = new PoolLocal();
            ps[pid] = p;
        }
        return p;
    }

    private static final PoolLocal[] NO_LOCALS = new PoolLocal[0];

    /**
     * One generation: for each runtime that used the pool, a PoolLocal per P (created on first
     * use), and a queue for platform threads.
     *
     * <p>Why per runtime. Go has one runtime per process, so a P id names one P. Here every
     * runtime numbers its Ps from 0: keyed by P id alone, two goroutines on "P0" of two runtimes
     * would share one PoolLocal, whose private slot and ring head are single-owner (the same
     * object handed out twice). A runtime's shard is found by its identity; the list is tiny
     * (one entry unless several runtimes share the pool) and copy-on-write under the pool's
     * monitor. A generation is dropped after two cleanups, and with it every runtime it names.
     */
    private static final class Locals {
        private volatile Shard[] shards = new Shard[0];
        final ConcurrentLinkedQueue<Object> unpinned = new ConcurrentLinkedQueue<>();

        /** rt's PoolLocals in this generation; empty if rt has none yet. Lock-free. */
        PoolLocal[] ps(GoRuntime rt) {
            for (Shard sh : shards) {
                if (sh.runtime == rt) {
                    return sh.ps;
                }
            }
            return NO_LOCALS;
        }

        /** Replaces rt's PoolLocals. The pool's monitor must be held. */
        void setPs(GoRuntime rt, PoolLocal[] ps) {
            Shard[] cur = shards;
            for (int i = 0; i < cur.length; i++) {
                if (cur[i].runtime == rt) {
                    Shard[] next = cur.clone();
                    next[i] = new Shard(rt, ps);
                    shards = next;
                    return;
                }
            }
            Shard[] next = java.util.Arrays.copyOf(cur, cur.length + 1);
            next[cur.length] = new Shard(rt, ps);
            shards = next;
        }
    }

    /** The PoolLocals of one runtime's Ps. */
    private record Shard(GoRuntime runtime, PoolLocal[] ps) {
    }

    /** Per-P pool storage. Padded against false sharing between Ps. Go: sync/pool.go poolLocal */
    static final class PoolLocal {
        long p0, p1, p2, p3, p4, p5, p6, p7;
        /** Can be used only by the respective P (while pinned). */
        Object privateObj;
        /** Local P can pushHead/popHead; any P can popTail. */
        final PoolDequeue shared = new PoolDequeue(PoolDequeue.DEFAULT_SIZE);
        long q0, q1, q2, q3, q4, q5, q6, q7;
    }

    // ---- cleanup -------------------------------------------------------------------------------

    private static final List<WeakReference<Pool<?>>> ALL_POOLS = new ArrayList<>();
    private static Thread cleaner;

    private static synchronized void register(Pool<?> p) {
        ALL_POOLS.add(new WeakReference<>(p));
        if (cleaner == null) {
            cleaner = Thread.ofPlatform().name("gosched-pool-cleanup").daemon(true).start(Pool::cleanupLoop);
        }
    }

    private static void cleanupLoop() {
        for (;;) {
            try {
                Thread.sleep(CLEANUP_INTERVAL_MS);
            } catch (InterruptedException e) {
                return;
            }
            poolCleanup();
        }
    }

    /**
     * Ages every pool one generation: drops the victims, moves the current objects to the victim
     * cache. Runs on the cleanup schedule (see the class comment); tests call it directly.
     * Go: sync/pool.go poolCleanup
     */
    static synchronized void poolCleanup() {
        for (int i = ALL_POOLS.size() - 1; i >= 0; i--) {
            Pool<?> p = ALL_POOLS.get(i).get();
            if (p == null) {
                ALL_POOLS.remove(i);
                continue;
            }
            synchronized (p) { // excludes pinSlow of the same pool
                p.victim = p.local;
                p.local = new Locals(); // each runtime's PoolLocals are created again on first use
            }
        }
    }

    // ---- poolDequeue ---------------------------------------------------------------------------

    /**
     * A lock-free fixed-size single-producer, multi-consumer ring: the owner P pushes and pops at
     * the head, anyone pops at the tail. Go grows a chain of these (poolChain); here each P has one
     * ring of {@link #DEFAULT_SIZE} slots and a push to a full ring drops the value, which a pool
     * is allowed to do.
     *
     * <pre>
     * headTail (one long, CAS-updated as a whole):
     *   63                 32 31                  0
     *  +---------------------+---------------------+
     *  | head: next slot to  | tail: oldest slot   |
     *  | fill (uint32)       | in use (uint32)     |
     *  +---------------------+---------------------+
     * </pre>
     * Both indices count up and wrap mod 2^32; the slot is index &amp; (size-1). The ring is empty when
     * head == tail and full when tail + size == head. A slot is free for the producer only once its
     * reference is null again: a consumer that won the tail CAS clears it after reading (Go's type
     * word), so a push never overwrites a value still being read.
     *
     * Go: sync/poolqueue.go poolDequeue
     */
    static final class PoolDequeue {
        static final int DEFAULT_SIZE = 128;
        static final int DEQUEUE_BITS = 32;
        static final long MASK32 = (1L << DEQUEUE_BITS) - 1;

        private static final VarHandle HEAD_TAIL;
        static {
            try {
                HEAD_TAIL = MethodHandles.lookup().findVarHandle(PoolDequeue.class, "headTail", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private volatile long headTail;
        private final AtomicReferenceArray<Object> vals;
        private final int mask;

        PoolDequeue(int size) {
            if (size <= 0 || (size & (size - 1)) != 0) {
                throw new IllegalArgumentException("size must be a power of 2: " + size);
            }
            vals = new AtomicReferenceArray<>(size);
            mask = size - 1;
        }

        static int head(long ptrs) {
            return (int) (ptrs >>> DEQUEUE_BITS);
        }

        static int tail(long ptrs) {
            return (int) (ptrs & MASK32);
        }

        static long pack(int head, int tail) {
            return ((long) head << DEQUEUE_BITS) | (tail & MASK32);
        }

        /** Executed only by the producer (owner P). False when the ring is full. Go: sync/poolqueue.go pushHead */
        boolean pushHead(Object val) {
            Objects.requireNonNull(val);
            long ptrs = headTail;
            int head = head(ptrs);
            int tail = tail(ptrs);
            if (tail + vals.length() == head) {
                return false; // queue is full
            }
            int slot = head & mask;
            // Check if the tail consumer that took this slot has finished with it (cleared it).
            if (vals.getAcquire(slot) != null) {
                return false; // another goroutine is still cleaning up the tail, so the queue is actually still full
            }
            vals.setPlain(slot, val);
            // Increment head. This passes ownership of slot to popTail and acts as a store barrier
            // for writing the slot (the add is a full fence).
            HEAD_TAIL.getAndAdd(this, 1L << DEQUEUE_BITS);
            return true;
        }

        /** Executed only by the producer. Null when empty. Go: sync/poolqueue.go popHead */
        Object popHead() {
            int slot;
            for (;;) {
                long ptrs = headTail;
                int head = head(ptrs);
                int tail = tail(ptrs);
                if (tail == head) {
                    return null; // queue is empty
                }
                // Confirm tail and decrement head. We do this before reading the value to take back
                // ownership of this slot.
                head--;
                long ptrs2 = pack(head, tail);
                if (HEAD_TAIL.compareAndSet(this, ptrs, ptrs2)) {
                    slot = head & mask;
                    break; // we successfully took back slot
                }
            }
            Object val = vals.getPlain(slot);
            // Zero the slot. Unlike popTail, this isn't racing with pushHead, so no ordering needed.
            vals.setPlain(slot, null);
            return val;
        }

        /** Can be executed by any consumer. Null when empty. Go: sync/poolqueue.go popTail */
        Object popTail() {
            int slot;
            for (;;) {
                long ptrs = headTail;
                int head = head(ptrs);
                int tail = tail(ptrs);
                if (tail == head) {
                    return null; // queue is empty
                }
                // Confirm head and tail (for our speculative check above) and increment tail. If this
                // succeeds, then we own the slot at tail.
                long ptrs2 = pack(head, tail + 1);
                if (HEAD_TAIL.compareAndSet(this, ptrs, ptrs2)) {
                    slot = tail & mask;
                    break; // success
                }
            }
            // We now own slot.
            Object val = vals.getPlain(slot);
            // Tell pushHead that we're done with this slot (release: our read happens before its reuse).
            vals.setRelease(slot, null);
            return val;
        }
    }
}
