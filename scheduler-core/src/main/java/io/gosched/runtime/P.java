package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A processor: the token an M must hold to run goroutines, and the owner of a local run queue,
 * a goid cache, its batches of allgs registrations and per-P counters. There are GOMAXPROCS of them in use.
 *
 * <p>Counters are written only by the M holding the P (release stores, plain moves on x86) and
 * read by {@code stats()} with acquire loads, so the hot path never touches a shared,
 * contended counter.
 *
 * Go: runtime/runtime2.go p
 */
final class P {

    // ---- status: every value says who owns the P while it holds it ----------------------------
    /** On the idle list (sched.pidle); owned by sched.lock. Its run queue is empty. */
    static final int IDLE = 0;
    /** Held by an M running Go code or the scheduler; owned by that M. */
    static final int RUNNING = 1;
    /** Its M is in a syscall; the M may take it back, sysmon may retake it by CAS. */
    static final int SYSCALL = 2;
    /** Stopped for a stop-the-world (procresize); owned by the world-stopper. */
    static final int GCSTOP = 3;
    /** Beyond GOMAXPROCS; kept for reuse, owned by nobody. */
    static final int DEAD = 4;

    // ---- counters (indices into counters[]) -----------------------------------------------------
    static final int C_SPAWNED = 0;
    static final int C_EXITED = 1;
    static final int C_SCHEDULES = 2;
    static final int C_STEALS = 3;
    static final int C_STOLEN = 4;
    static final int C_PREEMPTIONS = 5;
    static final int C_TIMERS_FIRED = 6;
    static final int C_NETPOLL_READY = 7;
    /** Hand-offs run on top of the parking partner (Scheduler, "Direct hand-off"). */
    static final int C_NESTED = 8;
    static final int N_COUNTERS = 9;
    /** Counters occupy a padded array of their own: 16 longs keep neighbours off their line. */
    private static final int COUNTER_SLOTS = 16;

    private static final VarHandle STATUS;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle SCHEDTICK;
    private static final VarHandle SYSCALLTICK;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(P.class, "status", int.class);
            SCHEDTICK = l.findVarHandle(P.class, "schedtick", long.class);
            SYSCALLTICK = l.findVarHandle(P.class, "syscalltick", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int id;
    private volatile int status;
    final RunQueue runq;
    /** This P's timers (Go: p.timers). Locked by its own lock; any P may run its due timers. */
    final TimerHeap timers;

    /**
     * A spare P lent by sysmon to run the work of a P whose goroutine ignores preemption (see
     * "Hogs" in Sysmon). Never in allp; its id is {@link SchedulerConfig#MAX_GOMAXPROCS} or more.
     */
    final boolean spare;
    /** For a spare: the hogged P it was lent for; sched.lock held to write. */
    P lender;
    /** For a hogged P: the spare lent for it, or null; sched.lock held to write. */
    P lentSpare;
    /**
     * For a spare: set (sched.lock held) when its lender is no longer hogged or the world stops;
     * whoever holds the spare next returns it (see "Hogs" in Sysmon).
     */
    volatile boolean retiring;
    /** For a spare: counted in sched.stopwait by a stop-the-world; sched.lock held. */
    boolean spareInStopwait;

    /** The M holding this P, or null. */
    volatile M m;
    /** Link on the idle list; sched.lock must be held. */
    P link;
    /** True while on the idle list: thieves skip it (Go's idlepMask). Racy reads are fine. */
    volatile boolean idle;

    /** Incremented on every new time slice (not for a G inheriting one through runnext). */
    private long schedtick;
    /** Incremented on every syscall. */
    private long syscalltick;

    // ---- sysmon's last observation of this P; owned by sysmon ------------------------------------
    long sysmonSchedtick;
    long sysmonSchedwhen;
    long sysmonSyscalltick;
    long sysmonSyscallwhen;
    /** The G sysmon asked to yield in the current time slice, and when (see "Hogs" in Sysmon). */
    G sysmonPreemptG;
    long sysmonPreemptWhen;
    /** pp's C_SCHEDULES count when sysmonPreemptG was recorded: unchanged means it never yielded. */
    long sysmonPreemptRuns;
    /** CPU time of the P's M thread when sysmon asked sysmonPreemptG to yield; -1 unknown. */
    long sysmonPreemptCpu;

    // ---- the owner's own look at its time slice (see "The quantum without sysmon" in Scheduler) ----
    /**
     * runnext hand-offs left until the owner reads the clock again, how many it let pass before
     * the last look (1 to Scheduler.HANDOFF_CLOCK_PERIOD_MAX), and when it last looked. Owner only.
     */
    int handoffs;
    int handoffPeriod = 1;
    long handoffClock;
    /** The schedtick of the slice whose start the owner saw, and when it first saw it. Owner only. */
    long sliceTick = -1;
    long sliceSeen;

    // ---- goid cache; owner only ------------------------------------------------------------------
    long goidcache;
    long goidcacheend;

    /** Cheap per-P random state (xorshift), for steal order and the latency sampling. */
    private int rand;

    private final long[] counters = new long[COUNTER_SLOTS];
    /** Scheduling-latency histogram buckets (see {@link LatencyBuckets#BOUNDS_NANOS}); owner writes. */
    final long[] latencyCounts;
    private long latencySumNanos;

    /** This P's ring of the active trace recording, or a stale one; written only by the P's holder. */
    Trace.Ring traceRing;
    /** This P's buffer in the flight recorder; written by the M holding the P. */
    FlightRecorder.Buffer flightBuffer;

    /** This P's batches of new and retired Refs in the runtime's AllGs; written by the M holding the P. */
    final AllGs.Buffers allgsBuffers;

    P(int id, int runqCapacity, long seed) {
        this(null, id, runqCapacity, seed, false);
    }

    P(Sched sched, int id, int runqCapacity, long seed, boolean spare) {
        this.id = id;
        this.allgsBuffers = sched != null ? sched.allgs.newBuffers() : null;
        this.spare = spare;
        this.runq = new RunQueue(runqCapacity);
        this.timers = new TimerHeap(sched, this);
        this.status = GCSTOP;
        this.rand = (int) (seed ^ (seed >>> 32)) | 1;
        this.latencyCounts = new long[LatencyBuckets.BOUNDS_NANOS.length + 1 + 8];
    }

    int status() {
        return status;
    }

    /**
     * A status change that may lose a race (sysmon's retake against exitsyscall's reacquire,
     * a stop-the-world against both); false when the P is not in from, and nothing changed.
     * The only contended transitions are out of SYSCALL, and they all go through here.
     * Go: runtime/proc.go retake, entersyscall_gcwait, exitsyscallfast (atomic.Cas(&pp.status, ...))
     */
    boolean tryCasStatus(int from, int to) {
        return STATUS.compareAndSet(this, from, to);
    }

    /**
     * A plain store, no check of the status it replaces: only the P's owner of the moment (see
     * the status table above: the M holding it, sched.lock for an idle one, the world-stopper)
     * writes it, so nothing can race it and there is nothing to compare. A writer that is not the
     * owner is a bug no status check would catch; the owner checks (Scheduler.ownedByCaller,
     * lockHeld) at the callers do.
     * Go: runtime/proc.go acquirep, releasep, procresize (pp.status = _Prunning, ...)
     */
    void setStatusUnchecked(int s) {
        status = s;
    }

    static String statusName(int s) {
        return s >= IDLE && s <= DEAD ? ProcStats.Status.ofCode(s).goName() : Integer.toString(s);
    }

    long schedtick() {
        return (long) SCHEDTICK.getOpaque(this);
    }

    /** Owner only. */
    void incSchedtick() {
        SCHEDTICK.setOpaque(this, schedtick + 1);
    }

    long syscalltick() {
        return (long) SYSCALLTICK.getOpaque(this);
    }

    /** By the owner, or by sysmon after winning the P by CAS. */
    void incSyscalltick() {
        SYSCALLTICK.setOpaque(this, (long) SYSCALLTICK.getOpaque(this) + 1);
    }

    /** Owner only. */
    void count(int counter) {
        LONGS.setRelease(counters, counter, counters[counter] + 1);
    }

    /** Owner only. */
    void count(int counter, long delta) {
        LONGS.setRelease(counters, counter, counters[counter] + delta);
    }

    long counter(int counter) {
        return (long) LONGS.getAcquire(counters, counter);
    }

    /** Owner only. */
    void recordLatency(int bucket, long nanos, int weight) {
        LONGS.setRelease(latencyCounts, bucket, latencyCounts[bucket] + weight);
        latencySumNanos += nanos * weight;
    }

    long latencyCount(int bucket) {
        return (long) LONGS.getAcquire(latencyCounts, bucket);
    }

    long latencySumNanos() {
        return latencySumNanos;
    }

    /** Owner only: a fast random int (xorshift32), Go's cheaprand. */
    int cheaprand() {
        int x = rand;
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        rand = x;
        return x & Integer.MAX_VALUE;
    }

    @Override
    public String toString() {
        return (spare ? "spareP" : "P") + id + "[" + statusName(status) + "]";
    }
}
