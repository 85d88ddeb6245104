package io.gosched.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * A machine: a platform thread named {@code gosched-m-N} that runs {@code schedule()} while it
 * holds a P, parks on its note when there is nothing to do, and runs a goroutine's blocking
 * code without a P during a syscall.
 *
 * Go: runtime/runtime2.go m
 */
final class M extends Thread {

    final int mid;
    final Sched sched;

    /** The P held, or null (idle, in a syscall, or handed off). Only this M writes it. */
    volatile P p;
    /** The P handed over by startm before the wake-up. */
    volatile P nextp;
    /** The P held before entering a syscall, to try to take back on exit. */
    P oldp;
    /** See "Spinning and wakep" in Scheduler. Written only by this M. */
    boolean spinning;
    /**
     * A goroutine runs on top of the frames of the partner that readied it, which is parking
     * (Scheduler, "Direct hand-off"). Written and read only by this M's thread: by the host's
     * frames around the nested run, and by the guest running on top, which steps out before a
     * syscall or lockOSThread (Scheduler.leaveHost). Read racily by a waker readying the host.
     */
    boolean nested;
    /**
     * While nested: the guest readied its host, which waits under it for the guest's next park
     * (see Scheduler.unburyHost). Written by this M's thread; read racily by thieves.
     */
    boolean hostReady;
    /**
     * Whether the G findRunnable just returned inherits the time slice (it came from runnext).
     * This M's own: see "findRunnable's and stealWork's second results" in Scheduler.
     */
    boolean inheritTime;
    /** Why stealWork found nothing: a timer ran or the world stops, look again. This M's own. */
    boolean stealNewWork;
    /** stealWork's earliest timer seen, 0 for none. This M's own. */
    long stealPollUntil;
    /** stealWork saw a victim refill its runnext (see RunQueue.grab). This M's own. */
    boolean stealVictimBusy;
    /**
     * When this M last backed off from a victim's runnext refilled during its pause (a hand-off
     * chain), or 0; see "Napping beside a hand-off chain" in Scheduler. Executed only by this M.
     */
    long handOffSeenAt;
    /** Holds curg, the goroutine mounted on this M; see {@link Cur}. Replaced only by this M. */
    private volatile Cur cur = new Cur();
    /** Clears of curg until {@link #cur} is replaced. This M's own. */
    private int untilCurRenewal = CUR_RENEW_EVERY;
    private static final int CUR_RENEW_EVERY = 4096;

    /**
     * curg, in a holder this M replaces with a fresh, empty one every {@value #CUR_RENEW_EVERY}
     * clears, so that it is nearly always a young object: with G1 on JDK 25 a reference store
     * into an old object from another region passes a StoreLoad fence in the card-marking
     * barrier, an M lives as long as its thread, and {@code execute} stores a G here at every
     * switch. The old holder is replaced right after it was cleared and is never written again,
     * so a reader still holding it sees "nothing mounted", which was true then.
     */
    private static final class Cur {
        volatile G g;
    }

    private static final java.lang.invoke.VarHandle CURG;

    static {
        try {
            CURG = java.lang.invoke.MethodHandles.lookup().findVarHandle(Cur.class, "g", G.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The goroutine mounted on this M, or null. Read by other threads (sysmon, stats, the safe
     * point's stop, dumps), each of which tolerates a stale value.
     */
    G curg() {
        return cur.g;
    }

    /**
     * Executed only by this M, at every switch. Store-release: publishes the G's fields to a
     * reader of curg; a volatile store here was a StoreLoad fence twice per goroutine switch
     * that no reader needs.
     */
    void setCurg(G gp) {
        Cur c = cur;
        CURG.setRelease(c, gp);
        if (gp == null && --untilCurRenewal == 0) {
            untilCurRenewal = CUR_RENEW_EVERY;
            cur = new Cur(); // see Cur: only right after a clear
        }
    }

    /** Link on the idle M list; sched.lock must be held. */
    M schedlink;
    /**
     * While tracing: the clock reading taken when the last goroutine on this M stopped, reused as
     * the start time of the next one when findRunnable found it on the fast path (local or
     * global queue), so a switch costs one clock read instead of two. 0 when none. See
     * Trace.recordAt.
     */
    long traceClock;
    /** This M's syscalltick snapshot, for exitsyscall's fast path. */
    long syscalltick;
    /** The goroutine wired to this M by Go.lockOSThread, or null (Go: m.lockedg). Written by that G. */
    volatile G lockedg;
    /** Its locked goroutine ended locked: this M leaves its scheduling loop and its thread ends. */
    boolean exiting;

    /** The park note: set by notewakeup, consumed by notesleep. */
    private volatile boolean wakeup;

    /**
     * The stack size of an M's thread under the direct hand-off (SchedulerConfig.directHandOff):
     * twice the JVM's for a thread (ThreadStackSize, -Xss). A goroutine run on top of its host
     * (Scheduler, "Direct hand-off") has the rest of its host's stack, so with twice the size each
     * of the two still has at least the stack one goroutine had alone. Only the pages a goroutine
     * touches cost memory. 0 (the JVM's default) when the size is unknown. A holder class, so that
     * a runtime without the hand-off neither reads the VM option (the platform MXBeans' start-up)
     * nor gives its Ms more than the JVM's default.
     */
    static final class HostStack {
        static final long SIZE = 2 * threadStackSize();

        private static long threadStackSize() {
            try {
                var diag = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
                return Long.parseLong(diag.getVMOption("ThreadStackSize").getValue()) * 1024;
            } catch (RuntimeException | LinkageError e) {
                return 0;
            }
        }

        private HostStack() {}
    }

    M(Sched sched, int mid) {
        super(sched.threadGroup, null, sched.threadNamePrefix + mid, sched.directHandOff ? HostStack.SIZE : 0, false);
        this.sched = sched;
        this.mid = mid;
        setDaemon(true);
    }

    @Override
    public void run() {
        sched.scheduler.mstart(this);
    }

    /*
     * Interrupts. A goroutine is not interruptible, as in Go (cancel it through a Context or a
     * channel); Thread.interrupt() reaches the M it runs on. The M clears its interrupt status
     * after each turn of a goroutine (Scheduler.execute) and when it sleeps (notesleep, netpoll),
     * as ForkJoinPool does between tasks, so a status set by goroutine code (the "restore the
     * interrupt" idiom of catch (InterruptedException)) is seen by that goroutine until its next
     * park, yield, preemption or end, and never by the next goroutine on the M, nor makes a
     * sleeping M or the poller spin (LockSupport.park and Selector.select return at once while
     * the status is set). Inside Go.syscall the body is ordinary blocking code on its M: an
     * interrupt then ends a Thread.sleep or an interruptible channel's I/O, as on any thread.
     */

    /** Clears this M's interrupt status (see "Interrupts"). Executed only by this M. */
    void clearInterrupt() {
        if (isInterrupted()) {
            Thread.interrupted();
        }
    }

    /** Parks this thread until {@link #notewakeup()}. Executed only by this M. */
    void notesleep() {
        while (!wakeup) {
            clearInterrupt(); // else park returns at once: see "Interrupts"
            LockSupport.park(this);
        }
        wakeup = false;
    }

    /** Wakes this M from {@link #notesleep()}. Can be executed by anyone. */
    void notewakeup() {
        wakeup = true;
        LockSupport.unpark(this);
    }

    /*
     * The current thread. C2 treats Thread.currentThread() as immutable within one compiled
     * method (only JDK methods annotated @ChangesCurrentThread are told otherwise): it loads it
     * once and reuses the value across calls. A goroutine's compiled frame spans its parks; when
     * it resumes on another M, the reused value names the old M. (Virtual threads never notice:
     * their currentThread is the virtual thread, which does not change when the carrier does.)
     *
     * The runtime's own code therefore never asks Thread.currentThread() from a goroutine. It
     * asks the JDK for the continuation mounted on this carrier (Continuation
     * .getCurrentContinuation, which reads the carrier thread with a plain load that C2 redoes
     * after every call) and takes the G from it, and the M from the G (execute sets G.m before
     * it mounts the G). Only with no goroutine mounted does it read Thread.currentThread():
     * then the calling frames belong to the M itself (or to a platform thread) and never move.
     * Both reads are correct with or without the JVM option below, and cost a few loads.
     *
     * User code in a goroutine (a ReentrantLock, ThreadLocal, ThreadLocalRandom, the JDK's own
     * locks in PrintStream and loggers) reads Thread.currentThread() itself, and for it there is
     * no such way round: the JVM must be started with
     *   -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread
     * which makes every currentThread() a call that reads the thread afresh (about 15 ns instead
     * of 1-2). GoRuntime.start() refuses a JVM without it (see GoRuntime.checkCurrentThreadIsFresh);
     * every launcher of the project passes it. See docs/scheduler.md, "The current thread".
     */

    /** The M running the calling code, or null on a thread that is not an M. Safe in goroutines. */
    static M current() {
        G gp = Coroutine.currentG();
        if (gp != null) {
            return gp.m;
        }
        // No goroutine mounted: these frames run on the thread that called them, for good.
        return Thread.currentThread() instanceof M mp ? mp : null;
    }
}
