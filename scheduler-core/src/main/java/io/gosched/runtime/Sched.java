package io.gosched.runtime;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The scheduler's global state, one per {@link GoRuntime}: the global run queue, idle P and M
 * lists, the spinning counters, the goid generator.
 *
 * <p>{@link #lock} (Go's sched.lock) guards the lists and the global queue; counters read on
 * hot paths are atomics. The lock is only ever held by scheduler code, never across a
 * goroutine yield, so a contended acquisition blocks an M only briefly, as Go's runtime
 * mutex does.
 *
 * Go: runtime/runtime2.go schedt
 */
final class Sched {

    final SchedulerConfig config;
    /** The preemption quantum in nanoseconds; 0 without sysmon (nothing is preempted then). */
    final long quantumNanos;
    /**
     * SchedulerConfig.randomizeScheduling: run-queue decisions taken at random to shake out
     * ordering assumptions (Go: randomizeScheduler, on under the race detector). Final, so a
     * runtime without it pays one load of a constant per runqput, not a random draw.
     */
    final boolean randomizeScheduler;
    /** SchedulerConfig.directHandOff: see Scheduler, "Direct hand-off". Final, read on every park. */
    final boolean directHandOff;
    final Scheduler scheduler;
    /** Spare Ps lent for hogs (see Sysmon, "Hogs"). */
    final SpareLending lending;
    /** The public face; set once by GoRuntime right after construction. */
    GoRuntime runtime;
    /** This runtime's event recording (GoRuntime.trace()); every emission point reads trace.on. */
    final Trace trace = new Trace();
    final ThreadGroup threadGroup;
    final String threadNamePrefix;
    /** For the uptime in stats: how long the runtime has been up in real time, not on nanoClock. */
    final long startNanos = System.nanoTime();

    /*
     * The runtime's clock: SchedulerConfig.nanoClock, read through nanotime() by everything that
     * acts on time (timers and sleeps, sysmon's retake and netpoll intervals, the quantum,
     * network deadlines, checkdead's back-off). With the default clock nanotime() calls
     * System.nanoTime() directly (no interface call on the hot paths). A synctest bubble keeps its
     * own fake clock (Bubble.nanotime) for its members' timers.
     *
     * Left on System.nanoTime, because they measure real threads rather than decide what the
     * program sees: trace and flight-recorder timestamps and the scheduling-latency histogram
     * (diagnostics read against other processes' clocks), the uptime above, the stop-the-world's
     * re-preempt interval and freezeTheWorld's bound and shutdown's timeout (bounds on how long
     * real threads are waited for: a clock that stands still must not hang them), the JVM-wide
     * timer heap of platform threads (no runtime, so no runtime clock), and sync.Mutex's
     * starvation threshold (Go reads the real nanotime for it too).
     *
     * One clock per runtime: a timer's when is on the clock of the runtime that armed it, so a
     * runtime with its own nanoClock keeps its timers to itself (reset from another runtime or
     * from a platform thread would compare whens of two clocks).
     */
    private final LongSupplier nanoClock;
    private final boolean systemClock;

    /*
     * Not a ReentrantLock: goroutine frames take this lock (goready, newproc, wakep), and a
     * ReentrantLock's owner is Thread.currentThread(), which compiled goroutine code may have
     * cached from before a migration (see M.current()): it could then think it already owns a
     * lock that another M holds. RuntimeLock is a word with no owner.
     */
    final RuntimeLock lock = new RuntimeLock();

    /** Guarded by lock. */
    final GlobalRunQueue runq = new GlobalRunQueue(lock);

    // ---- idle Ps (guarded by lock; npidle also read without it) --------------------------------
    P pidle;
    final AtomicInteger npidle = new AtomicInteger();

    // ---- idle Ms (guarded by lock) -------------------------------------------------------------
    M midle;
    int nmidle;
    /** Ms created so far; guarded by lock. */
    int mnext;
    /** Every M ever started; guarded by lock. */
    final java.util.List<M> allm = new java.util.ArrayList<>();

    /** See "Spinning and wakep" in Scheduler. Padded: every wakep reads it. */
    final PaddedAtomicInteger nmspinning = new PaddedAtomicInteger();
    /**
     * The spinning M napping beside a hand-off chain, or null; see "Napping beside a hand-off
     * chain" in Scheduler. Read after every put into a ring or the global queue.
     */
    final AtomicReference<M> napper = new AtomicReference<>();
    /** Naps beside a hand-off chain ended by a put of stealable work rather than by their timer. */
    final AtomicLong napperWakes = new AtomicLong();
    /** Set when an M wanted to spin but found no idle P: the next M to drop its P spins instead. */
    volatile int needspinning;

    /** Whether this runtime counts in SafePoint's pending word; CAS-updated only by SafePoint (see there). */
    volatile boolean safePointRaised;

    /** All Ps ever created, indexed by id; entries at and beyond gomaxprocs are DEAD. Copy-on-grow. */
    volatile P[] allp = new P[0];
    volatile int gomaxprocs;
    volatile RandomOrder stealOrder;

    final AtomicLong goidgen = new AtomicLong();

    /** Every G, weakly, and the leaked ones (see AllGs). */
    final AllGs allgs = new AllGs();
    /**
     * nanotime as of sysmon's last tick (20 us to 10 ms old), 0 without sysmon: a park stamps
     * G.waitSince with it instead of reading the clock (25 ns or more, a tenth of a park here).
     * Written only by sysmon, at most every 20 us: every park reads it, and a write costs each
     * reading core one cache miss.
     */
    volatile long coarseNanotime;

    /**
     * Held by whoever stops the world (gomaxprocs(n)), for the whole stop and restart. A
     * semaphore, not a monitor: a goroutine waiting for it parks and leaves its P free for the
     * stop in progress, and one holding it may go through exitsyscall's slow path (a yield).
     * Go: runtime/proc.go worldsema
     */
    final Sema worldsema = new Sema(1);

    // ---- stop-the-world (guarded by lock; gcwaiting read without it) ---------------------------
    volatile boolean gcwaiting;
    int stopwait;
    volatile Thread stopperThread;
    volatile boolean stopnoteSet;

    /** Set by shutdown once goroutines are done or the timeout passed: every M exits. */
    volatile boolean stopping;
    /** Set by shutdown: goroutines from outside are refused. */
    volatile boolean closing;

    // ---- counters not owned by a P ---------------------------------------------------------------
    /** Goroutines created from platform threads (no P to count them). */
    final AtomicLong spawnedOutside = new AtomicLong();
    /** Goroutines that ended on an M without a P; guarded by lock. */
    long exitedWithoutP;
    /** Spinning Ms that wakep started (woke or created): each one a futex wake-up or a new thread. */
    final AtomicLong spinnerStarts = new AtomicLong();
    final AtomicLong preemptHandoffs = new AtomicLong();
    final AtomicLong syscallHandoffs = new AtomicLong();
    /** Ms currently in a syscall (between entersyscall and exitsyscall). */
    final AtomicInteger nmsyscall = new AtomicInteger();
    /** Ms alive. */
    final AtomicInteger mcount = new AtomicInteger();

    // ---- uncaught exceptions (see SchedulerConfig.PanicPolicy) ---------------------------------
    final SchedulerConfig.PanicPolicy panicPolicy;
    /** The custom handler, or null. */
    final Thread.UncaughtExceptionHandler uncaughtHandler;
    /** The panic that ended this runtime under CRASH; completed once, by the first. */
    final java.util.concurrent.CompletableFuture<GoroutinePanicException> panicked = new java.util.concurrent.CompletableFuture<>();
    /** The results of GoRuntime.run calls waiting from outside: a panic fails them all. */
    final java.util.Set<java.util.concurrent.CompletableFuture<?>> runs = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Those run calls' mains, for the deadlock proof sysmon makes (see Checkdead). */
    final Checkdead checkdead = new Checkdead(this);

    // ---- netpoll (see Netpoll) ---------------------------------------------------------------------
    /** The poller; created with the runtime. */
    final Netpoll netpoll;
    /**
     * When the network was last polled (nanotime), or 0 while an M is blocked in netpoll: then
     * that M is the one to break out for an earlier timer (Go: sched.lastpoll).
     */
    final AtomicLong lastpoll = new AtomicLong();
    /** The blocked poller's deadline (nanotime), 0 = none or forever (Go: sched.pollUntil). */
    volatile long pollUntil;
    /** Goroutines readied by netpoll for a caller without a P (sysmon, a P-less poller). */
    final AtomicLong netpollReadyNoP = new AtomicLong();

    // ---- spare Ps lent to hogged Ps (see "Hogs" in Sysmon); guarded by lock ----------------------
    /** Spare Ps in use (lent, not yet returned). Copy-on-write, read lock-free by thieves and stats. */
    volatile P[] spares = new P[0];
    /** Every spare P ever created, for stats: their counters count goroutines too. Copy-on-grow. */
    volatile P[] allspares = new P[0];
    /** Returned spare Ps, for reuse. */
    final java.util.ArrayDeque<P> sparePool = new java.util.ArrayDeque<>();

    Sched(SchedulerConfig config, String name) {
        this.config = config;
        this.quantumNanos = config.sysmon() ? config.preemptQuantum().toNanos() : 0;
        this.randomizeScheduler = config.randomizeScheduling();
        this.directHandOff = config.directHandOff();
        this.nanoClock = config.nanoClock();
        this.systemClock = config.systemClock();
        this.lastpoll.set(nanotime() | 1);
        this.threadGroup = new ThreadGroup(name);
        this.threadNamePrefix = "gosched-m-";
        this.panicPolicy = config.panicPolicy();
        this.uncaughtHandler = config.uncaughtExceptionHandler();
        this.scheduler = new Scheduler(this);
        this.lending = new SpareLending(this, scheduler);
        this.netpoll = new Netpoll(this);
    }

    /** The runtime's clock (SchedulerConfig.nanoClock); see the note above its field. Go: nanotime */
    long nanotime() {
        return systemClock ? System.nanoTime() : nanoClock.getAsLong();
    }

    /**
     * gp's body ended by t (not Goexit). Runs in gp, on its M, after gp's frames have unwound.
     * Go: runtime/panic.go fatalpanic (CRASH)
     */
    void uncaught(G gp, Throwable t) {
        uncaught(gp.goid, gp.panicLabels(), t);
    }

    /** As {@link #uncaught(G, Throwable)} for a failure outside a goroutine (goid -1: a timer function on an M). */
    void uncaught(long goid, java.util.Map<String, String> labels, Throwable t) {
        try {
            if (uncaughtHandler != null) {
                uncaughtHandler.uncaughtException(Thread.currentThread(), t);
            } else if (panicPolicy == SchedulerConfig.PanicPolicy.LOG) {
                System.err.println((goid < 0 ? "a runtime timer function" : "goroutine " + goid) + " ended by an uncaught exception:");
                t.printStackTrace();
            } else {
                crash(goid, labels, t);
            }
        } catch (Throwable ignored) {
            // A failing handler must not take the M down with it.
        }
    }

    /**
     * CRASH: the first panic wins (a second, racing it, is dropped, as Go prints one); it is
     * printed with the runtime's state, every waiting run() fails with it, and the runtime halts:
     * no goroutine runs again.
     */
    private void crash(long goid, java.util.Map<String, String> labels, Throwable t) {
        GoroutinePanicException p = new GoroutinePanicException(goid, labels, t);
        if (!panicked.complete(p)) {
            return;
        }
        // Halt first: the dump below takes time, and other goroutines should not run on meanwhile.
        // run() fails only once the running goroutines have stopped (freezeTheWorld), so a
        // caller that sees the panic sees no goroutine go on after it.
        runtime.freezeTheWorld(runtime.halt(), java.time.Duration.ofSeconds(1));
        System.err.print(panicText(goid, t));
        for (java.util.concurrent.CompletableFuture<?> r : runs) {
            r.completeExceptionally(p);
        }
    }

    /**
     * Go's panic print: "panic: ...", then "goroutine N [running]:" with the frames of the
     * exception, then the scheduler's state (every P and M) and every other goroutine's traceback
     * (GoRuntime.dumpGoroutines).
     */
    private String panicText(long goid, Throwable t) {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.PrintWriter w = new java.io.PrintWriter(out);
        w.println("panic: " + t);
        w.println();
        w.println("goroutine " + goid + " [running]:");
        t.printStackTrace(w);
        w.println();
        w.println(Stats.schedtrace(this, true));
        // The other goroutines, as Go prints them after a panic (the runtime is halted: nothing moves).
        try {
            w.print(runtime.dumpGoroutines());
        } catch (RuntimeException dumpFailed) {
            w.println("(goroutine dump failed: " + dumpFailed + ")");
        }
        w.flush();
        return out.toString();
    }

    /** An AtomicInteger kept off its neighbours' cache lines. */
    static final class PaddedAtomicInteger extends AtomicInteger {
        long p1, p2, p3, p4, p5, p6, p7;
    }
}
