package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A goroutine: a stackful coroutine plus the scheduler's bookkeeping.
 *
 * <p>Every goroutine gets a new G, dropped when it exits: Go's free lists of Gs exist to reuse
 * stacks, and a JDK continuation that has finished cannot be restarted (see newG in {@link
 * Scheduler} for what a recycled G cost here).
 *
 * Go: runtime/runtime2.go g
 */
final class G implements Runnable {

    // ---- status: every value says who owns the G while it holds it ----------------------------
    /** Just allocated; owned by the creating M. */
    static final int IDLE = 0;
    /** On a run queue (runnext, local ring or global queue); owned by that queue. */
    static final int RUNNABLE = 1;
    /** Mounted on an M that holds a P; owned by that M. */
    static final int RUNNING = 2;
    /** Inside {@code Go.syscall}: mounted on an M that released its P; owned by that M. */
    static final int SYSCALL = 3;
    /** Parked by {@code gopark}; owned by whatever wait list it is on (channel, timer, sema). */
    static final int WAITING = 4;
    /**
     * Still RUNNING, but already readied by a waker: it released its channel lock before yielding
     * (see Scheduler.goparkUnlocked), so its coming park is cancelled and its M runs it again.
     */
    static final int READIED = 5;
    /** Finished; owned by nobody, garbage once nothing points at it. */
    static final int DEAD = 6;

    private static final String[] STATUS_NAMES = {"idle", "runnable", "running", "syscall", "waiting", "readied", "dead"};

    /**
     * Or-ed into WAITING or RUNNABLE while a goroutine snapshot reads the G's unmounted stack
     * (GoRuntime.goroutines). Set only by the snapshot, with a CAS from the plain status, and
     * cleared by it; every other transition out of a scanned status waits in casgstatus until
     * the bit is gone, so nobody mounts a continuation while its frames are being walked.
     * Go: runtime/runtime2.go _Gscan
     */
    static final int SCAN = 0x1000;

    // ---- what the G asks of its M when it yields (read by the M after run() returns) -----------
    static final byte OP_NONE = 0;
    /** gopark: mark waiting, run the commit. */
    static final byte OP_PARK = 1;
    /** Gosched: to the global queue. */
    static final byte OP_GOSCHED = 2;
    /** Preempted at a safe point: to the global queue, counted as a preemption. */
    static final byte OP_PREEMPT = 3;
    /** exitsyscall found no P: to the global queue, the M stops. */
    static final byte OP_EXITSYSCALL = 4;
    /**
     * A goroutine running on top of a parked partner (Scheduler, "Direct hand-off") steps out
     * before it enters a syscall or wires itself to its thread: into runnext, not chained.
     */
    static final byte OP_UNNEST = 5;

    private static final VarHandle STATUS;
    private static final VarHandle SELECT_DONE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(G.class, "status", int.class);
            SELECT_DONE = l.findVarHandle(G.class, "selectDone", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Sched sched;
    long goid;
    Coroutine coroutine;
    Runnable body;

    private volatile int status;

    /** Link in the global run queue or a list of Gs being readied; only the list's owner touches it. */
    G schedlink;
    /**
     * The M this G is mounted on while it runs (or is in a syscall); read only for the running G
     * (getg().m). Between its runs it still names the M it last ran on, or null: parks and yields
     * leave it, so that a G running again on the same M (always so on one P) stores nothing. Under
     * G1 a reference store into an old object costs a StoreLoad fence (the card-marking barrier),
     * at every switch. A stale M keeps nothing alive: Ms live as long as the runtime.
     */
    M m;
    /** Set by the G before it yields; read and cleared by its M. See OP_*. */
    byte op;
    /*
     * Why the park fields are few and the wait reason is a byte: a long-lived G sits in the old
     * generation, and with G1 every non-null reference store into an old object pays a StoreLoad
     * fence in the card-marking barrier (JDK 25). gopark runs once per blocking operation, so it
     * stores one reference (parkCommit; parkArg only when the commit needs one) and a byte.
     */
    ParkCommit parkCommit;
    Object parkArg;
    /**
     * WaitReason ordinal + 1 of the last park with a reason (read only while the G is waiting), 0
     * before its first. Invariant: when not 0, {@code ref.waitreason} holds the same code, so a
     * park with the reason of the one before writes neither (see {@link #setWaitreason}).
     */
    byte waitreason;

    /**
     * Preemption request, set by sysmon or the world-stopper, read at every safe point
     * ({@code Go.checkpoint}) with a plain volatile load. See "Preemption on the JVM" in Scheduler.
     */
    volatile boolean preempt;

    /**
     * Put into runnext by a running goroutine (a channel hand-off, a go statement), so it goes
     * on with that goroutine's time slice; false when a timer, the poller or another thread
     * readied it. Written by whoever queues the G. See "The quantum without sysmon" in Scheduler.
     */
    boolean chained;

    /**
     * The low byte of the goid of the goroutine whose hand-off readied this G last (written by
     * that goroutine in goready; 0 before the first). When this G is about to park and the G in
     * its P's runnext matches it, the two are a pair passing the turn back and forth, and the
     * partner runs on top of this G's frames (Scheduler, "Direct hand-off"). A byte, because it
     * fills the one free byte of the G's layout: a goroutine is 96 bytes with compact headers
     * and a long would make it 104. A false match (goids 256 apart) only runs a partner on top
     * that was not going to ready this G: correct, and as fast as the usual switch.
     */
    byte readier;

    /** Set by a waker before {@code goready}: what woke the G (Go's gp.param). */
    Object param;
    /** Select wake-up arbitration: a waker must win casSelectDone(0, 1). */
    private volatile byte selectDone;

    /** The timer of Go.sleep, made at the first sleep and kept for the next (Go: gp.timer); its arg is this G. */
    Timers.SleepTimer sleepTimer;

    /**
     * The synctest bubble this goroutine belongs to, or null (every goroutine outside bubbles).
     * Set by newproc from the creator before the G is queued, cleared by goexit0; never changes
     * in between. Outside bubbles the runtime's only cost is the null check of this field on a
     * status change (see Bubble).
     */
    Bubble bubble;
    /** Counted as durably blocked by its bubble. Guarded by the bubble's monitor. */
    boolean bubbleBlocked;

    /**
     * procPin depth: while positive, safe points do not yield. A short, and lockedExt below too:
     * two ints left the G's fields 4 bytes past a multiple of 8, so the G took 104 bytes; with
     * two shorts it takes 96 (issue 20, memory per goroutine). Go's counters are 32-bit; here a
     * nesting deeper than Short.MAX_VALUE is refused with an error (Go.procPin, Go.lockOSThread).
     */
    short locks;

    /**
     * The M this G is wired to by {@code Go.lockOSThread}, or null. Written only by this G while
     * it runs (lockOSThread, unlockOSThread) and by its M when it exits; read by any M that takes
     * the G off a run queue (startlockedm). Go: g.lockedm
     */
    volatile M lockedm;
    /** lockOSThread nesting depth (Go: m.lockedExt, kept on the G: the two are wired); see locks. */
    short lockedExt;

    /**
     * Sched-latency tracking: every {@link LatencyBuckets#TRACKING_PERIOD}th G is timed from
     * runnable to running (Go's gTrackingPeriod; a hand-off one in
     * LatencyBuckets#HAND_OFF_TRACKING_PERIOD), so the cost of {@code System.nanoTime} is paid by
     * few transitions. 0 when not tracked.
     */
    long runnableSince;
    /**
     * How many transitions the timed one stands for (LatencyBuckets#HAND_OFF_WEIGHT or 1); read
     * only when runnableSince != 0.
     */
    byte runnableWeight;

    // ---- observability: identity, labels, creation, wait time (see AllGs, GoroutineInfo) ---------
    /**
     * This G's entry in the runtime's weak list of all Gs, created with the G. It holds what a leak report needs after the G itself is gone (goid, labels, created
     * at, wait reason), because the G is only weakly reachable from it. Go: allgs
     */
    final AllGs.Ref ref;
    /**
     * When the current wait began (nanotime, sysmon's coarse clock), or 0 when unknown; written
     * at every park, stamped lazily by a snapshot when 0. Go: g.waitsince
     */
    long waitSince;

    G(Sched sched) {
        this(sched, null);
    }

    /** A G registered through the buffers of the creating P (null: registered at once). */
    G(Sched sched, AllGs.Buffers buffers) {
        this.sched = sched;
        // Run-queue unit tests make Gs without a runtime: they get a Ref no list holds.
        this.ref = sched != null ? sched.allgs.add(this, buffers) : new AllGs.Ref(this, null);
    }

    /** The body of the coroutine: the user's function, then goexit (when run() returns). */
    @Override
    public void run() {
        Runnable fn = body;
        try {
            fn.run();
        } catch (Go.Goexit exit) {
            // runtime.Goexit: the goroutine ends, its finally blocks have run; not a panic
        } catch (Throwable t) {
            if (!(t instanceof Scheduler.LockedMStopped)) { // the runtime stopped under a locked G: not its failure
                sched.uncaught(this, t);
            }
        }
    }

    /** The labels a panic of this goroutine reports (GoroutinePanicException.labels). */
    java.util.Map<String, String> panicLabels() {
        return ref.labels;
    }

    /**
     * pprof labels: an immutable map, never null, inherited from the creator (Go: g.labels).
     * Kept in the Ref alone, which a leak report needs anyway: a second copy in the G cost every
     * goroutine 8 bytes (G 120 -> 112 with the byte-sized op and selectDone).
     */
    java.util.Map<String, String> labels() {
        return ref.labels;
    }

    long goid() {
        return goid;
    }

    int status() {
        return status;
    }

    /**
     * A status change that must succeed: fails loudly on an illegal transition, because a G in
     * two places at once is the one bug a scheduler cannot survive.
     *
     * <p>The G's status changes through three methods, named for what they do:
     * <ul>
     * <li>{@code casgstatus}: must succeed; waits out a snapshot's SCAN, else throws naming the
     *     status found (Go: casgstatus, which throws too);</li>
     * <li>{@link #tryCasgstatus}: may lose a race the caller expects and handles (a waker against
     *     a G still on its way into gopark, READIED against RUNNING); returns false and changes
     *     nothing (Go writes these races as bare atomic.Cas on gp.atomicstatus);</li>
     * <li>{@link #initStatus}: no CAS, for a G nobody else can see yet (Go: newproc1's
     *     casgstatus from _Gdead, which cannot fail there).</li>
     * </ul>
     * Go: runtime/proc.go casgstatus
     */
    void casgstatus(int from, int to) {
        if (!STATUS.compareAndSet(this, from, to)) {
            casgstatusSlow(from, to);
        }
        if (bubble != null && from == WAITING) {
            bubble.unparked(this);
        }
    }

    /**
     * casgstatus when the CAS failed: waits out a snapshot reading the stack (SCAN), else fails.
     * Only a status that is neither from nor from|SCAN is a failure: a snapshot may set and clear
     * SCAN any number of times between this loop's read and its CAS (a dump in a loop does), so a
     * failed CAS, or a read that finds from again, just means look once more.
     */
    private void casgstatusSlow(int from, int to) {
        for (;;) {
            int s = status;
            if (s == (from | SCAN)) {
                Thread.onSpinWait(); // a snapshot walks the frames for a few microseconds
            } else if (s != from) {
                throw new IllegalStateException("casgstatus: goroutine " + goid + " is "
                        + statusName(s) + ", expected " + statusName(from) + " -> " + statusName(to));
            } else if (STATUS.compareAndSet(this, from, to)) {
                return;
            }
        }
    }

    /**
     * Sets SCAN on a WAITING or RUNNABLE G so that nobody mounts it; false when the G is in any
     * other status (or being scanned). Only snapshots call it; {@link #endScan} undoes it.
     * Can be executed by any thread. Go: runtime/proc.go castogscanstatus
     */
    boolean tryBeginScan(int from) {
        return (from == WAITING || from == RUNNABLE) && STATUS.compareAndSet(this, from, from | SCAN);
    }

    /** Clears SCAN set by {@link #tryBeginScan}. Go: runtime/proc.go casfrom_Gscanstatus */
    void endScan(int from) {
        if (!STATUS.compareAndSet(this, from | SCAN, from)) {
            throw new IllegalStateException("endScan: goroutine " + goid + " is " + statusName(status));
        }
    }

    /**
     * A status change that may legitimately fail; returns false and changes nothing when gp is
     * not in from. The caller decides what a failure means (see {@link #casgstatus}).
     */
    boolean tryCasgstatus(int from, int to) {
        if (!STATUS.compareAndSet(this, from, to)) {
            return false;
        }
        if (bubble != null && from == WAITING) {
            bubble.unparked(this);
        }
        return true;
    }

    /**
     * RUNNING to RUNNABLE by the G's own M after a Gosched or a preemption, with a release store
     * instead of a CAS. Nobody else writes a RUNNING G's status then: a snapshot sets SCAN only
     * on WAITING or RUNNABLE, and the one waker that races a RUNNING G (RUNNING to READIED, see
     * Scheduler.goready) holds a sudog from a wait queue, which a G that yielded without
     * parking is on none of. The queue the G goes to next is published under a lock, so its
     * taker sees RUNNABLE. One locked instruction fewer per yield, 6 to 12 ns on the machines
     * measured (bench/results/NOTES.md).
     * Go: runtime/proc.go goschedImpl (casgstatus, a CAS there because of the GC's scan bit)
     */
    void yieldedToRunnable() {
        assert status == RUNNING : "yieldedToRunnable: goroutine " + goid + " is " + statusName(status);
        STATUS.setRelease(this, RUNNABLE);
    }

    /**
     * READIED to RUNNING by the G's own M, after a direct hand-off (Scheduler, "Direct
     * hand-off"), with a release store instead of a CAS: a READIED G's status belongs to its M
     * alone (a waker that finds it READIED fails, a snapshot sets SCAN only on WAITING and
     * RUNNABLE), as a RUNNING one's does in {@link #yieldedToRunnable}. One locked instruction
     * fewer per round trip of a pair.
     */
    void readiedToRunning() {
        assert status == READIED : "readiedToRunning: goroutine " + goid + " is " + statusName(status);
        STATUS.setRelease(this, RUNNING);
    }

    /** For a G not yet visible to anyone else (just allocated). */
    void initStatus(int s) {
        STATUS.setRelease(this, s);
    }

    boolean casSelectDone(int expect, int update) {
        return SELECT_DONE.compareAndSet(this, (byte) expect, (byte) update);
    }

    void setSelectDone(int v) {
        selectDone = (byte) v;
    }

    boolean selectDone() {
        return selectDone != 0;
    }

    /** Why this G waits, or null. */
    /**
     * A park's reason that differs from the last one's: into the G and into its AllGs.Ref, for a
     * leak report if nothing reachable ever wakes the G. Only on a change: the Ref is another object,
     * and in a long chain of parked goroutines another cache miss per park. Executed only by this G.
     */
    void setWaitreason(byte code) {
        waitreason = code;
        ref.waitreason = code;
    }

    WaitReason waitreason() {
        return WaitReason.of(waitreason);
    }

    static String statusName(int s) {
        if ((s & SCAN) != 0) {
            return "scan " + statusName(s & ~SCAN);
        }
        return s >= 0 && s < STATUS_NAMES.length ? STATUS_NAMES[s] : Integer.toString(s);
    }

    @Override
    public String toString() {
        return "goroutine " + goid + " [" + (status == WAITING && waitreason() != null ? waitreason() : statusName(status)) + "]";
    }
}
