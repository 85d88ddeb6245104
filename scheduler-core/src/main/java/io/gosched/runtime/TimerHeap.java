package io.gosched.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * The timers of one P: a 4-ary min-heap ordered by {@code when}, under its own lock, with the
 * earliest {@code when} published in a volatile field that others read without the lock
 * (Go's {@code wakeTime}). Also the JVM-wide heap for timers armed from platform threads,
 * served by one daemon thread.
 *
 * <p>A 4-ary heap (parent (i-1)/4, children 4i+1..4i+4) is shallower than a binary one, so
 * the sift-up of a new timer, the common operation, touches fewer entries (Go's timerHeapN).
 *
 * <p>Who runs it. The owner P's M in {@code findRunnable} (step 2 of Go's order); any thief on
 * its last stealing pass, even while the owner runs or is idle; the netpoll owner computes its
 * deadline from {@link #wakeTime()} of every heap. Function calls are made with the lock
 * released, so a timer function may arm timers, ready goroutines, or stop itself.
 *
 * <p>Lock order: sched.lock, then a heap's monitor, then a timer's monitor. Nothing takes
 * sched.lock while holding a heap's monitor (wake-ups are made after unlocking).
 *
 * <p>Why monitors and not a ReentrantLock. Goroutines arm and stop timers, and C2 treats
 * Thread.currentThread() as constant within a compiled method (see M.current): a goroutine frame
 * that inlined ReentrantLock.lock() and later resumed on another M would take the lock in the
 * old M's name, and could then "re-enter" it while that M really holds it. A monitor is owned by
 * the executing thread itself, never by a cached Thread object.
 *
 * Go: runtime/time.go timers
 */
final class TimerHeap {

    /** Heap arity (Go: timerHeapN). */
    static final int ARITY = 4;

    /** The JVM-wide heap for platform threads; created on first use. */
    private static volatile TimerHeap global;

    /** The runtime whose P owns this heap, or null for the JVM-wide heap. */
    final Sched sched;
    /** The owner P, or null for the JVM-wide heap. */
    final P owner;

    /** Guarded by lock. */
    private RuntimeTimer[] heap = new RuntimeTimer[8];
    /** Guarded by lock; mirrored in {@link #size} for lock-free readers. */
    private int len;
    private volatile int size;
    /** heap[0].when, or 0 when empty. Written under lock, read lock-free (Go: minWhenHeap). */
    volatile long minWhen;

    /** The thread serving the JVM-wide heap; null for P heaps. */
    private final Thread server;

    TimerHeap(Sched sched, P owner) {
        this.sched = sched;
        this.owner = owner;
        this.server = null;
    }

    private TimerHeap(String serverName) {
        this.sched = null;
        this.owner = null;
        this.server = Thread.ofPlatform().daemon().name(serverName).unstarted(this::serve);
    }

    /**
     * The heap a timer armed by the calling thread goes to: its P's when the caller is an M
     * holding a P, else the JVM-wide heap.
     * Can be executed by any thread.
     */
    static TimerHeap current() {
        M mp = M.current();
        if (mp != null) {
            P pp = mp.p;
            if (pp != null) {
                return pp.timers;
            }
        }
        return global();
    }

    static TimerHeap global() {
        TimerHeap g = global;
        if (g == null) {
            synchronized (TimerHeap.class) {
                g = global;
                if (g == null) {
                    g = new TimerHeap("gosched-timers");
                    g.server.start();
                    global = g;
                }
            }
        }
        return g;
    }

    /** The earliest pending when, or 0. Lock-free. Go: timers.wakeTime */
    long wakeTime() {
        return minWhen;
    }

    /** The number of timers in the heap. Lock-free, racy. */
    int size() {
        return size;
    }

    // =============================================================================================
    // Heap operations: lock held
    // =============================================================================================

    /** Lock and t's monitor held; t is in no heap. */
    void add(RuntimeTimer t) {
        assert Thread.holdsLock(this) && t.ts == null;
        if (len == heap.length) {
            heap = java.util.Arrays.copyOf(heap, len * 2);
        }
        heap[len] = t;
        t.idx = len;
        t.ts = this;
        len++;
        size = len;
        siftUp(len - 1);
    }

    /** Lock and the monitor of heap[i] held. Removes heap[i]. */
    void removeAt(int i) {
        assert Thread.holdsLock(this);
        RuntimeTimer t = heap[i];
        int last = --len;
        size = len;
        if (i != last) {
            RuntimeTimer moved = heap[last];
            heap[i] = moved;
            moved.idx = i;
            heap[last] = null;
            siftUp(i);
            siftDown(moved.idx);
        } else {
            heap[last] = null;
        }
        t.ts = null;
        t.idx = -1;
    }

    /** Lock held: heap[i].when changed; restore the heap order. */
    void fix(int i) {
        assert Thread.holdsLock(this);
        RuntimeTimer t = heap[i];
        siftUp(i);
        siftDown(t.idx);
    }

    /** Lock held. */
    void updateMinWhen() {
        assert Thread.holdsLock(this);
        minWhen = len > 0 ? heap[0].when : 0;
    }

    private void siftUp(int i) {
        RuntimeTimer t = heap[i];
        long w = t.when;
        while (i > 0) {
            int p = (i - 1) / ARITY;
            RuntimeTimer pt = heap[p];
            if (w >= pt.when) {
                break;
            }
            heap[i] = pt;
            pt.idx = i;
            i = p;
        }
        heap[i] = t;
        t.idx = i;
    }

    private void siftDown(int i) {
        RuntimeTimer t = heap[i];
        long w = t.when;
        int n = len;
        for (;;) {
            int c = i * ARITY + 1;
            if (c >= n) {
                break;
            }
            int min = c;
            long minW = heap[c].when;
            int end = Math.min(c + ARITY, n);
            for (int k = c + 1; k < end; k++) {
                long kw = heap[k].when;
                if (kw < minW) {
                    min = k;
                    minW = kw;
                }
            }
            if (minW >= w) {
                break;
            }
            RuntimeTimer ct = heap[min];
            heap[i] = ct;
            ct.idx = i;
            i = min;
        }
        heap[i] = t;
        t.idx = i;
    }

    /** Checks the heap invariant; for tests. Lock held. */
    boolean verify() {
        for (int i = 1; i < len; i++) {
            if (heap[(i - 1) / ARITY].when > heap[i].when || heap[i].idx != i || heap[i].ts != this) {
                return false;
            }
        }
        return len == 0 || (heap[0].idx == 0 && minWhen == heap[0].when);
    }

    // =============================================================================================
    // Running timers
    // =============================================================================================

    /**
     * Runs every timer due at now. Returns the number run; {@link #pollUntil} afterwards holds
     * the next when (0 = none). Lock-free when nothing is due, which is the common case of a
     * scheduling round.
     * Can be executed by any thread (the owner P's M, a thief, the JVM-wide heap's server).
     * Go: runtime/time.go timers.check, timers.run, timer.unlockAndRun
     */
    int check(long now) {
        long next = minWhen;
        if (next == 0 || next > now) {
            return 0;
        }
        int ran = 0;
        for (;;) {
            RuntimeTimer t;
            long w;
            long seq;
            synchronized (this) {
                if (len == 0) {
                    break;
                }
                t = heap[0];
                synchronized (t) {
                    w = t.when;
                    if (w > now) {
                        break;
                    }
                    seq = t.take(now);
                    if (t.when > 0) {
                        siftDown(0); // periodic: next tick
                    } else {
                        removeAt(0);
                    }
                    updateMinWhen();
                }
            }
            // The heap is unlocked while the function runs (Go's unlockAndRun).
            try {
                t.run(seq, w, now - w);
            } catch (Throwable e) {
                reportTimerFailure(e);
            }
            ran++;
        }
        return ran;
    }

    /**
     * {@link #check} for a synctest bubble's heap: takes every timer due at now first, then runs
     * them in a random order, so that timers due at the same instant do not always fire in the
     * same order and tests cannot come to depend on one (Go's TestTimerNondeterminism). Periodic
     * timers are taken once (their next when is after now). Executed only by the bubble's driver.
     */
    int checkShuffled(long now, java.util.random.RandomGenerator rnd) {
        java.util.ArrayList<RuntimeTimer> due = new java.util.ArrayList<>();
        java.util.ArrayList<long[]> taken = new java.util.ArrayList<>();
        synchronized (this) {
            while (len > 0) {
                RuntimeTimer t = heap[0];
                synchronized (t) {
                    long w = t.when;
                    if (w > now) {
                        break;
                    }
                    long seq = t.take(now);
                    if (t.when > 0) {
                        siftDown(0);
                    } else {
                        removeAt(0);
                    }
                    due.add(t);
                    taken.add(new long[] {seq, w});
                }
            }
            updateMinWhen();
        }
        int n = due.size();
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            int j = rnd.nextInt(i + 1);
            order[i] = order[j];
            order[j] = i;
        }
        for (int i : order) {
            long[] st = taken.get(i);
            try {
                due.get(i).run(st[0], st[1], now - st[1]);
            } catch (Throwable e) {
                reportTimerFailure(e);
            }
        }
        return n;
    }

    private void reportTimerFailure(Throwable e) {
        if (sched != null) {
            sched.uncaught(-1, java.util.Map.of(), e);
        } else {
            Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), e);
        }
    }

    /**
     * Moves every timer of this heap into dst, keeping each timer's when.
     * sched.lock must be held (all moves are serialized by it); neither heap lock is held.
     * Go: runtime/time.go timers.take
     */
    long moveAllTo(TimerHeap dst) {
        assert Scheduler.lockHeld(sched.lock) : "moveAllTo: sched.lock not held";
        synchronized (this) {
            synchronized (dst) {
                while (len > 0) {
                    RuntimeTimer t = heap[len - 1];
                    synchronized (t) {
                        removeAt(len - 1);
                        dst.add(t);
                    }
                }
                updateMinWhen();
                dst.updateMinWhen();
                return dst.minWhen;
            }
        }
    }

    /**
     * A timer now due at when became this heap's earliest: make sure someone wakes for it.
     * Can be executed by any thread, holding no lock.
     * Go: runtime/time.go timer.maybeAdd's wakeNetPoller
     */
    void wake(long when) {
        if (sched != null) {
            sched.scheduler.wakeNetPoller(when);
        } else {
            LockSupport.unpark(server);
        }
    }

    /** The JVM-wide heap's server loop: run due timers, sleep until the next. */
    private void serve() {
        for (;;) {
            long now = System.nanoTime(); // no runtime here: RuntimeTimer.nanotime off an M
            check(now);
            long next = minWhen;
            if (next == 0) {
                LockSupport.park(this);
            } else {
                long d = next - System.nanoTime();
                if (d > 0) {
                    LockSupport.parkNanos(this, d);
                }
            }
        }
    }
}
