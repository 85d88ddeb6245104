package io.gosched.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * The system monitor: a dedicated platform thread without a P that preempts goroutines which
 * ran past their quantum, retakes Ps from Ms stuck in syscalls, polls the network when nobody
 * has for 10 ms, and lends a spare P to a P whose goroutine ignores preemption.
 *
 * <p>Sleep schedule as Go's: 20 µs while it keeps finding work, doubling after 50 idle rounds
 * (about 1 ms), up to 10 ms.
 *
 * <h2>Hogs</h2>
 *
 * <p>Go stops a goroutine that ignores the cooperative preempt request with a signal
 * (asynchronous preemption). A JDK continuation cannot be stopped from outside, and we must
 * not take the P away from the hog's M either: the hog's M may be in the middle of an
 * owner-only P operation (runqput into its ring, a counter, its goid cache) at any instant,
 * and no check can be made atomic with "this M stops owning the P" while the M runs user code.
 *
 * <p>So the hog keeps its P, and sysmon gives the P's waiting work a new home instead. When the
 * same goroutine has run a whole quantum since it was asked to yield (two quanta into its time
 * slice, 20 ms by default) without its P running any other G meanwhile and its M's thread really ran meanwhile (at least a quarter quantum
 * of CPU: on a loaded machine a thread the OS did not run looks the same by the wall clock),
 * or its M's thread is blocked in the JDK (a monitor, a {@code java.util.concurrent} lock, a
 * sleep or I/O not wrapped in {@code Go.syscall}: a system call the runtime was not told of,
 * which in Go would have handed its P off), sysmon lends a
 * <em>spare P</em> for the hogged P: a P outside allp
 * (ids from {@link SchedulerConfig#MAX_GOMAXPROCS} up) with its own run queue and timer heap,
 * and starts an M on it ({@code SpareLending.lend}, counted in {@code preemptHandoffs} and in
 * {@code handoffs}). That M runs the ordinary findRunnable: it takes the global queue, steals
 * the hogged P's ring and, on its last pass, its runnext and due timers (thieves may take all
 * three from a running P: the ring's head is CAS-consumed, runnext is CAS-cleared, the heap
 * has its own lock), and it sleeps in netpoll until the earliest timer of every P, spare ones
 * included. A spare P takes part in everything a P does (the idle list, syscalls, stealing,
 * sysmon's preemption) except that it is never in allp and never lent a spare of its own.
 *
 * <p>When the hog reaches a safe point (its P starts a new time slice or runs another G),
 * sysmon takes the spare back ({@code SpareLending.giveBack}): an idle spare leaves at once;
 * one held by an M is marked retiring, its goroutine is asked to yield, and the M gives it back
 * at its next scheduling round, its queued Gs moving to the global queue and its timers to the
 * lender's heap. A stop-the-world takes every spare back first and never lends one.
 *
 * <p>Guarantees. While any goroutine hogs its P for more than two quanta, the goroutines and
 * timers queued behind it (and on the global queue) keep being scheduled with at most one extra
 * P per hogged P, i.e. with at most 2 x GOMAXPROCS Ps running user code. A hog is delayed by
 * nothing. The hog itself still runs until its next safe point: code without safe points is
 * never interrupted, and a stop-the-world (gomaxprocs(n)) waits for it as Go's would without
 * asynchronous preemption.
 *
 * <p>Cost. A brief oversubscription of threads: up to GOMAXPROCS extra Ms compete for CPUs with
 * the hogs while hogs run, so goroutines get less CPU each than GOMAXPROCS would allow, rather
 * than none. The spare Ps are pooled, so a workload with recurring hogs allocates nothing new.
 *
 * <p>Rejected: (1) retaking the hogged P (as for a syscall) and letting its M re-acquire a P at
 * the next safe point: racy, see above; (2) a thread per P that runs timers: it still could not
 * run the goroutines queued on the P.
 *
 * Go: runtime/proc.go sysmon, retake, preemptone
 */
final class Sysmon implements Runnable {

    static final long MIN_DELAY_NANOS = 20_000;
    static final long MAX_DELAY_NANOS = 10_000_000;
    /** A P in a syscall with no local work and others able to run is left alone this long. */
    static final long SYSCALL_GRACE_NANOS = 10_000_000;
    /** Sysmon polls the network if nobody has for this long. */
    static final long NETPOLL_INTERVAL_NANOS = 10_000_000;

    private final Sched sched;
    private final Thread thread;
    private final long quantumNanos;
    private volatile boolean stopped;

    Sysmon(Sched sched) {
        this.sched = sched;
        this.quantumNanos = sched.config.preemptQuantum().toNanos();
        this.thread = new Thread(sched.threadGroup, this, sched.threadGroup.getName() + "-sysmon");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    boolean awaitStopped(long millis) {
        try {
            thread.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    @Override
    public void run() {
        int idle = 0;
        long delay = MIN_DELAY_NANOS;
        while (!stopped) {
            if (idle == 0) {
                delay = MIN_DELAY_NANOS;
            } else if (idle > 50) {
                delay = Math.min(delay * 2, MAX_DELAY_NANOS);
            }
            if (thread.isInterrupted()) {
                Thread.interrupted(); // else parkNanos returns at once (see "Interrupts" in M)
            }
            LockSupport.parkNanos(this, delay);
            if (stopped) {
                break;
            }
            sched.coarseNanotime = sched.nanotime();
            sched.allgs.poll(); // leak reports for Gs the collector found unreachable (cheap when none)
            pollIfStale();
            long now = sched.nanotime();
            idle = retake(now) > 0 ? 0 : idle + 1;
            SafePoint.lowerIfAnswered(sched, null);
            sched.checkdead.tick(sched.nanotime()); // a few counter reads while a run() waits, else nothing
        }
        SafePoint.withdraw(sched);
    }

    /**
     * Polls the network if nobody has for 10 ms (every M busy running goroutines), so that
     * goroutines waiting on sockets are not starved by compute.
     * Go: the netpoll step of runtime/proc.go sysmon
     */
    private void pollIfStale() {
        Netpoll np = sched.netpoll;
        long now = sched.nanotime();
        long lp = sched.lastpoll.get();
        if (lp == 0 || lp + NETPOLL_INTERVAL_NANOS >= now || !np.polling.compareAndSet(false, true)) {
            return;
        }
        G list = null;
        try {
            if (sched.lastpoll.compareAndSet(lp, now | 1)) {
                list = np.netpoll(0);
            }
        } finally {
            np.polling.set(false);
        }
        if (list != null) {
            sched.netpollReadyNoP.addAndGet(sched.scheduler.injectglist(list));
        }
    }

    /**
     * Preempts Gs that ran a whole quantum, lends a spare P for a G that ignored the request
     * for another quantum (and takes it back once it yielded), and retakes Ps whose M is in a
     * syscall. Returns the number of Ps retaken or lent.
     * Go: runtime/proc.go retake
     */
    int retake(long now) {
        int n = 0;
        P[] allp = sched.allp;
        int procs = Math.min(sched.gomaxprocs, allp.length);
        for (int i = 0; i < procs; i++) {
            n += retakeOne(allp[i], now);
        }
        for (P sp : sched.spares) {
            n += retakeOne(sp, now);
        }
        return n;
    }

    private int retakeOne(P pp, long now) {
        int n = 0;
        int s = pp.status();
        boolean sysretake = false;
        if (s == P.RUNNING || s == P.SYSCALL) {
            long t = pp.schedtick();
            if (pp.sysmonSchedtick != t) {
                pp.sysmonSchedtick = t;
                pp.sysmonSchedwhen = now;
                pp.sysmonPreemptG = null;
            } else if (pp.sysmonSchedwhen + quantumNanos <= now) {
                if (s == P.RUNNING && !pp.spare && hogging(pp, now) && sched.lending.lend(pp)) {
                    n++;
                }
                preemptone(pp);
                // A P in a syscall cannot be preempted: retake it instead.
                sysretake = true;
            }
        }
        if (!pp.spare && pp.lentSpare != null && !stillHogged(pp)) {
            sched.lending.giveBack(pp);
        }
        if (s != P.RUNNING && pp.lentSpare == null) {
            // The hog candidate stopped running: forget it. A G held here stays reachable, so one
            // that parked for ever after a long turn would never be found leaked (or a deadlock).
            pp.sysmonPreemptG = null;
        }
        if (s == P.SYSCALL) {
            long t = pp.syscalltick();
            if (!sysretake && pp.sysmonSyscalltick != t) {
                // Retake only after the P has been in the same syscall for a whole tick.
                pp.sysmonSyscalltick = t;
                pp.sysmonSyscallwhen = now;
                return n;
            }
            if (pp.runq.isEmpty() && sched.nmspinning.get() + sched.npidle.get() > 0
                    && pp.sysmonSyscallwhen + SYSCALL_GRACE_NANOS > now) {
                return n;
            }
            if (pp.tryCasStatus(P.SYSCALL, P.IDLE)) {
                n++;
                pp.incSyscalltick();
                sched.syscallHandoffs.incrementAndGet();
                if (sched.trace.on) {
                    sched.trace.recordShared(pp.id, -1, Trace.K_PROC_HANDOFF, 0);
                }
                sched.scheduler.handoffp(pp);
            }
        }
        return n;
    }

    /**
     * Whether pp's current G was asked to yield at least a quantum ago and has not stopped
     * running since: no G at all was executed on pp meanwhile (pp's schedule count is
     * unchanged; schedtick is not enough, a runnext chain shares one slice), and its M's thread
     * really ran. Records the G asked and the counts to compare with.
     * Executed only by sysmon.
     */
    private boolean hogging(P pp, long now) {
        M mp = pp.m;
        G gp = mp != null ? mp.curg() : null;
        if (gp == null) {
            return false;
        }
        long runs = pp.counter(P.C_SCHEDULES);
        if (gp != pp.sysmonPreemptG || runs != pp.sysmonPreemptRuns) {
            pp.sysmonPreemptG = gp;
            pp.sysmonPreemptRuns = runs;
            pp.sysmonPreemptWhen = now;
            pp.sysmonPreemptCpu = threadCpuTime(mp);
            return false;
        }
        if (pp.sysmonPreemptWhen + quantumNanos > now || pp.lentSpare != null) {
            return false;
        }
        if (gp.op != G.OP_NONE) {
            // It answered: it is on its way off the P (a yield or park in progress; the JDK's
            // freeze of a stack with cold frames can take milliseconds). Read racily: a stale
            // OP_NONE only lets the CPU test below decide, as before.
            return false;
        }
        // A thread the OS did not run for a while looks like a hog by the wall clock alone (a
        // loaded machine): require that the M really ran since the request. A goroutine with
        // safe points yields within microseconds of running, so a quarter quantum of CPU
        // without yielding is conclusive; asking for a whole one would only delay the hand-off
        // on a loaded machine, where that much CPU takes several quanta of wall time.
        long cpu = threadCpuTime(mp);
        if (cpu < 0 || pp.sysmonPreemptCpu < 0 || cpu - pp.sysmonPreemptCpu >= quantumNanos / 4) {
            return true;
        }
        // Or it did not run because it is blocked in the JDK: a monitor, a lock, a sleep or I/O
        // not wrapped in Go.syscall. That is a system call the runtime was not told of, and in Go
        // no thread blocks in one holding a P (retake hands it off), so its work gets a spare.
        return blockedInTheJdk(mp);
    }

    /**
     * Whether mp's thread is blocked (entering a monitor) or waiting (a lock, a sleep, a park)
     * now. Asked only about an M whose goroutine has ignored a preempt request for a quantum
     * without running and without starting a park or yield (op NONE): the runtime's own waits
     * (notesleep, stoplockedm) happen with no goroutine on the M, so this one is the user's.
     */
    private static boolean blockedInTheJdk(M mp) {
        Thread.State st = mp.getState();
        return st == Thread.State.BLOCKED || st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }

    /** Whether the G that hogged pp is still running the same turn there. */
    private static boolean stillHogged(P pp) {
        M mp = pp.m;
        G hog = pp.sysmonPreemptG;
        return hog != null && pp.status() == P.RUNNING && pp.counter(P.C_SCHEDULES) == pp.sysmonPreemptRuns
                && mp != null && mp.curg() == hog;
    }

    /** CPU time consumed by mp's thread in nanoseconds, or -1 if the JVM cannot tell. */
    private static long threadCpuTime(M mp) {
        try {
            return THREADS != null ? THREADS.getThreadCpuTime(mp.threadId()) : -1;
        } catch (UnsupportedOperationException e) {
            return -1;
        }
    }

    private static final java.lang.management.ThreadMXBean THREADS = cpuTimeBean();

    private static java.lang.management.ThreadMXBean cpuTimeBean() {
        try {
            java.lang.management.ThreadMXBean b = java.lang.management.ManagementFactory.getThreadMXBean();
            if (b.isThreadCpuTimeSupported()) {
                if (!b.isThreadCpuTimeEnabled()) {
                    b.setThreadCpuTimeEnabled(true);
                }
                return b;
            }
        } catch (RuntimeException | LinkageError e) {
            // no management support: fall back to the wall clock
        }
        return null;
    }

    /**
     * Asks the G running on pp to yield at its next safe point.
     * Go: runtime/proc.go preemptone
     */
    static boolean preemptone(P pp) {
        M mp = pp.m;
        if (mp == null) {
            return false;
        }
        G gp = mp.curg();
        if (gp == null) {
            return false;
        }
        gp.preempt = true;
        SafePoint.raise(mp.sched); // after the flag: see SafePoint
        return true;
    }
}
