package io.gosched.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The scheduler's algorithms: Go's proc.go, rule for rule, over one {@link Sched}.
 *
 * Go: runtime/proc.go
 */
final class Scheduler {

    /*
     * Implementation overview
     * =======================
     *
     * Vocabulary. A G is a goroutine (a JDK continuation plus bookkeeping), an M a platform
     * thread, a P a processor token: an M must hold a P to run Gs, and there are GOMAXPROCS Ps.
     * Each P owns a local run queue (a 256-slot ring plus runnext); there is one global queue
     * under sched.lock. An M loops schedule() -> findRunnable() -> execute(g). execute mounts
     * the G's continuation on the M's own stack; when the G yields (gopark, Gosched,
     * preemption, exitsyscall without a P) run() returns and the M acts on what the G asked
     * (G.op) before picking the next G. There is no g0 stack: the code after run() returns is
     * the g0 part of Go's mcall.
     *
     * Run-queue order. newproc and goready put the G into runnext of the current P, kicking the
     * old runnext to the tail of the ring, so a G readied by a channel operation runs next and
     * inherits the remaining time slice (execute does not bump schedtick when inheritTime):
     * a ping-pong pair shares one slice and sysmon can preempt them together. Every 61st
     * schedtick findRunnable takes one G from the global queue first, so the global queue is
     * never starved by two Gs that keep readying each other. Gosched and preemption send the G
     * to the global queue's tail. A full ring moves half of itself plus the new G to the global
     * queue in one batch (runqputslow).
     *
     * Direct hand-off (a JVM departure). A goroutine about to park in a channel send or
     * receive whose P's runnext holds the partner that readied it last runs that partner on
     * top of its own frames (a nested continuation) instead of yielding to its M, and goes on
     * without parking if the partner readies it: a ping-pong round trip is one continuation
     * switch instead of two. Opt-in (SchedulerConfig.directHandOff). See "Direct hand-off" at
     * goparkUnlocked for its rules and for the guarantee it gives up.
     *
     * Stealing. An M with nothing local or global steals: 4 passes over all Ps in a random
     * order (random start, stride coprime with GOMAXPROCS), taking half of a victim's ring; on
     * the last pass it may also take the victim's runnext, after a ~3 µs pause when the victim
     * is running (it is probably about to run that G itself).
     *
     * Spinning and wakep. A spinning M is one looking for work to steal. At most half the busy
     * Ps may have spinning Ms (2*nmspinning < GOMAXPROCS - npidle). Whoever submits work calls
     * wakep(), which starts a new spinning M only if there is an idle P and no M is spinning
     * already (CAS nmspinning 0 -> 1): one spinner at a time is enough, because the spinner
     * that finds work calls resetspinning() -> wakep() and so wakes the next one. This is how
     * parallelism ramps up without a thundering herd. The two sides form a Dekker pair:
     *   submitter: publish work (volatile write)  ->  read nmspinning (volatile read)
     *   spinner:   nmspinning-- (volatile RMW)    ->  re-check every queue (volatile reads)
     * In the Java memory model all volatile accesses are totally ordered consistently with
     * program order, so at least one side sees the other: either the submitter sees a spinner
     * and relies on it, or the spinner's re-check sees the work. This "delicate dance" is why
     * findRunnable re-checks the global queue and all local queues after dropping its P and
     * decrementing nmspinning. (Local ring publication is a release store, not volatile; as in
     * Go, a G in a running P's ring needs no wake-up for liveness, its owner will run it.)
     *
     * Parking. An M with nothing to do puts its P on the idle list and parks on its note
     * (stopm); startm hands it a P (nextp) and wakes it. Parked Ms cost no CPU.
     *
     * Preemption on the JVM. Go preempts a G that ran 10 ms by a signal that injects a call
     * at an asynchronous safe point. A JDK continuation cannot be stopped from outside, so the
     * request is cooperative: sysmon sets G.preempt, and every safe point (Go.checkpoint, every
     * channel, timer, sync and syscall operation) reads it with one volatile load and yields
     * to the global queue when set. What happens to a G that never reaches a safe point is
     * described in Sysmon; what happens when sysmon itself gets no CPU, in "The quantum without
     * sysmon" below.
     *
     * Syscalls. Go.syscall marks the P SYSCALL and the M lets go of it (entersyscall); on
     * return the M takes the same P back if nobody retook it (CAS SYSCALL -> RUNNING), else any
     * idle P, else the G goes to the global queue and the M parks (exitsyscall0). A goroutine
     * operation made inside the blocking code leaves the syscall for its duration and enters it
     * again afterwards (syscallCallback, Go's cgocallbackg).
     *
     * The current thread. Goroutine frames never ask Thread.currentThread() for the runtime's
     * own purposes: getg() takes the G from the mounted continuation and the M from the G (see
     * M). User code does, and needs the JVM option SafeJvm names; GoRuntime.start checks it.
     *
     * Rejected approaches. (1) Virtual threads with a custom scheduler: the JDK's scheduler
     * hook gives no runnext, no per-carrier queues we own, and no syscall hand-off; measured,
     * its park/unpark floor alone is about what a whole gosched hand-off costs (see
     * docs/scheduler.md, "The current thread"). (2) One
     * queue per M instead of per P: Go's point is that run queues survive their M blocking.
     * (3) A LinkedBlockingQueue for the global queue: it would add a second lock next to
     * sched.lock that guards the idle lists the global queue is always checked with.
     *
     * Memory ordering. RunQueue documents its protocol. P and G status changes are CAS or
     * volatile. Counters are single-writer (the P owner) release stores read with acquire
     * loads by stats(). sched.lock orders everything on the idle lists and the global queue.
     *
     * Declaration order. Constants first, then the contract checks, then the code in the order
     * a goroutine's life and proc.go's meet it: the goroutine-side entry points (go, gopark,
     * goready, Gosched), creation and exit (newproc, goexit0), the run queues (runqput, runqget,
     * runqsteal, the global queue), the scheduling loop (schedule, findRunnable, execute), then
     * what the loop calls when it has nothing to run or must give its P away: spinning, waking
     * and parking Ms, syscalls, LockOSThread, and last stop-the-world and procresize. A section
     * starts with a banner naming it. What proc.go keeps elsewhere is elsewhere here too: the
     * spare-P lending for hogs in SpareLending (Go: preempt.go), sysmon in Sysmon, the latency
     * histogram's buckets in LatencyBuckets (histogram.go), timers in Timers and TimerHeap
     * (time.go), channels in Chan (chan.go), checkdead in Checkdead.
     *
     * Style notes. A method that has a Go twin carries its name and ends its comment with
     * "Go: runtime/<file> <function>"; a departure from Go is said where it is made, beginning
     * "JVM departure". "...Locked" means the caller holds the lock, and is asserted (see
     * Contracts); "Executed only by mp" or "owner P only" names the one thread that may call it.
     * Fields read racily say so next to the field. Comments say why and name the invariant; the
     * names say what. Results come back as values (runqsteal's Stolen), never through fields a
     * reader must trace, except findRunnable's and stealWork's second results, which their M
     * keeps (see "findRunnable's and stealWork's second results": an allocation on the way from
     * one goroutine to the next cost a stall on AVX-512 machines). Hot paths allocate nothing but
     * a successful steal's Stolen; a check that would cost on them is an assert (the tests run
     * with -ea) or one read of a flag (the final randomizeScheduler, the runtime's trace.on).
     */

    /** Local run queue capacity (Go: len(p.runq)). */
    static final int RUNQ_SIZE = 256;
    /** Steal passes over all Ps (Go: stealTries). */
    static final int STEAL_TRIES = 4;
    /** Goids taken from sched.goidgen at a time (Go: _GoidCacheBatch). */
    static final int GOID_CACHE_BATCH = 16;
    /** Global queue fairness check interval in schedticks. */
    static final int GLOBAL_RUNQ_CHECK = 61;
    /** Spin rounds and pauses per round, for sync.Mutex and RuntimeLock (Go: active_spin, active_spin_cnt). */
    static final int ACTIVE_SPIN = 4;
    static final int ACTIVE_SPIN_CNT = 30;

    final Sched sched;

    Scheduler(Sched sched) {
        this.sched = sched;
    }

    // =============================================================================================
    // Contracts (Go: assertLockHeld, and the owner-P rule of runqput/runqget)
    // =============================================================================================
    /*
     * Every "sched.lock must be held" and "executed only by the owner P" below is checked by an
     * assert on these (the tests run with -ea; without it an assert costs nothing, not even the
     * call). Departure from Go: RuntimeLock has no owner (see its class comment), so lockHeld
     * says the lock is held, not that the caller holds it; a caller that forgot the lock while
     * another M held it passes. ownedByCaller is exact: the P is the one of the caller's M.
     *
     * Naming, as in Go: a method whose name ends in "Locked" is called with the lock it names
     * already held by the caller (SpareLending.retireLocked, Bubble.wakeIfIdleLocked, Semaphore's
     * notifyWaitersLocked), and asserts it. One that takes the lock itself says so
     * (globrunqputTakingLock). "Locked" in the LockOSThread sense is never that suffix
     * (exitWithLockedM: the G ended while wired to its M).
     */

    /** Go: runtime/lockrank_off.go assertLockHeld (as far as an ownerless lock can tell). */
    static boolean lockHeld(RuntimeLock l) {
        return l.isHeld();
    }

    /** Whether pp is the P of the M running the calling code: the owner-P-only rule. */
    static boolean ownedByCaller(P pp) {
        M mp = M.current();
        return mp != null && mp.p == pp;
    }

    // =============================================================================================
    // Goroutine-side entry points (static: they find the runtime from the current M or the G)
    // =============================================================================================

    /**
     * The M of the caller whose goroutine is gp (from {@link #getg()}, null when the caller is
     * not a goroutine): gp's M, or the M whose scheduler code calls, or null on another thread.
     */
    static M mFor(G gp) {
        return gp != null ? gp.m : M.current();
    }

    /**
     * The running goroutine, or null on a thread that is not running one. Fresh after a
     * migration to another M (see "The current thread" in M).
     * Go: getg
     */
    static G getg() {
        return Coroutine.currentG();
    }

    /**
     * Parks the current goroutine until someone calls {@link #goready}. commit runs on the M
     * after the G is WAITING (see {@link ParkCommit}). If the goroutine cannot yield (pinned by
     * {@code Go.procPin} or a native frame), throws IllegalStateException <em>before</em> commit
     * runs, so the caller still holds its lock and can take its waiter off the queue.
     * Executed only by a goroutine.
     * Go: runtime/proc.go gopark
     */
    static void gopark(ParkCommit commit, Object arg, WaitReason reason) {
        G gp = getg();
        if (gp == null) {
            throw new IllegalStateException("gopark outside a goroutine");
        }
        if (gp.status() == G.SYSCALL) {
            throw notInSyscall(gp, reason);
        }
        byte code = reason.code();
        if (gp.waitreason != code) {
            gp.setWaitreason(code);
        }
        gp.waitSince = gp.sched.coarseNanotime;
        gp.parkCommit = commit;
        if (arg != null) {
            gp.parkArg = arg; // see G "Why the park fields are few"
        }
        gp.op = G.OP_PARK;
        if (!yieldToScheduler(gp)) {
            gp.op = G.OP_NONE;
            gp.parkCommit = null;
            gp.parkArg = null;
            throw cannotPark(gp, reason);
        }
    }

    /**
     * Makes a parked G runnable: into runnext of the caller's P (it inherits the caller's time
     * slice), or the global queue when the caller holds no P of this runtime; then wakep.
     * Can be executed by any thread.
     * Go: runtime/proc.go goready, ready
     */
    static void goready(G gp) {
        goready(gp, false);
    }

    /**
     * goready for a waiter that may not have yielded yet: with {@code mayStillRun}, a G found
     * RUNNING (it released its lock and is on its way into {@link #goparkUnlocked}) is marked
     * READIED instead, and its own M runs it again; nothing is queued.
     */
    static void goready(G gp, boolean mayStillRun) {
        goready(gp, mayStillRun, M.current());
    }

    /** {@link #goready(G, boolean)} by a caller running on mp (null: not on an M), found once by its operation. */
    static void goready(G gp, boolean mayStillRun, M mp) {
        Scheduler s = gp.sched.scheduler;
        P pp = mp != null && mp.sched == gp.sched ? mp.p : null;
        // A goroutine hands off; a timer, the poller or a platform thread does not.
        G readier = pp != null ? mp.curg() : null;
        boolean readied = false;
        if (!gp.tryCasgstatus(G.WAITING, G.RUNNABLE)) {
            if (mayStillRun) {
                if (readier != null) {
                    // Timed before the CAS that lets gp's own M run it on: a G readied before it
                    // parked, and a host readied by its guest (see "Direct hand-off"), make the
                    // same runnable-to-running transition as one queued in runnext.
                    s.trackHandOff(gp, pp.cheaprand());
                }
                readied = readyBeforePark(gp);
            } else {
                gp.casgstatus(G.WAITING, G.RUNNABLE); // fails loudly, naming the status found
            }
        }
        if (readier != null && gp.sched.directHandOff) {
            gp.readier = (byte) readier.goid; // a byte store: no barrier (see G.readier); read only by the hand-off
        }
        if (gp.sched.trace.on) {
            G tr = mp != null ? mp.curg() : null;
            gp.sched.trace.recordUntimed(pp, gp.goid, Trace.K_GO_UNPARK, tr != null ? tr.goid : -1);
        }
        if (readied) {
            // Its own M runs it again (see parkM); nothing to queue, nobody to wake. If it is a
            // host under a guest that did not ready it, the guest yields at its next safe point.
            hostReadied(gp, readier);
            return;
        }
        if (pp != null) {
            boolean chained = readier != null;
            int rnd = pp.cheaprand();
            if (chained) {
                s.trackHandOff(gp, rnd);
            } else {
                s.trackRunnable(gp, rnd);
            }
            gp.chained = chained;
            s.runqput(pp, gp, true);
        } else {
            s.trackRunnable(gp, ThreadLocalRandom.current().nextInt());
            s.globrunqputTakingLock(gp);
        }
        s.wakep();
    }

    /**
     * Marks a RUNNING gp as READIED, or, if it parked meanwhile, makes it RUNNABLE. Returns true
     * when gp was READIED (its M will run it again), false when it is now RUNNABLE (the caller
     * queues it as usual).
     */
    private static boolean readyBeforePark(G gp) {
        for (;;) {
            if (gp.tryCasgstatus(G.RUNNING, G.READIED)) {
                return true;
            }
            if (gp.tryCasgstatus(G.WAITING, G.RUNNABLE)) {
                return false;
            }
            int st = gp.status();
            if (st == (G.WAITING | G.SCAN)) {
                Thread.onSpinWait(); // a goroutine snapshot is walking its frames
                continue;
            }
            if (st != G.RUNNING && st != G.WAITING) {
                throw new IllegalStateException("goready: goroutine " + gp.goid + " is " + G.statusName(st));
            }
        }
    }

    /**
     * Parks the current goroutine after it published its waiter and released the lock guarding
     * the queue (Chan's plain send and receive). A waker may take the waiter and call goready
     * before the yield: goready then marks the G READIED instead of queueing it, and parkM runs it
     * again at once. Why: the lock is released before the continuation is frozen, not after, so
     * a contended channel's lock is held for a few dozen instructions instead of the length of a
     * freeze and parkM (Go holds it across its much cheaper mcall switch).
     * Returns false, without parking, when the goroutine cannot yield (pinned): the caller must
     * withdraw its waiter, or, when a waker already took it, {@link #awaitReadied}.
     * Executed only by a goroutine.
     */
    static boolean goparkUnlocked(G gp, WaitReason reason) {
        assert gp.status() != G.SYSCALL : "goparkUnlocked inside a syscall";
        byte code = reason.code();
        if (gp.waitreason != code) {
            gp.setWaitreason(code);
        }
        gp.waitSince = gp.sched.coarseNanotime;
        if (gp.sched.scheduler.runPartnerOnTop(gp)) {
            return true; // readied while its partner ran on top of it: see "Direct hand-off"
        }
        gp.op = G.OP_PARK;
        if (!yieldToScheduler(gp)) {
            gp.op = G.OP_NONE;
            return false;
        }
        return true;
    }

    /*
     * Direct hand-off (a JVM departure: fewer continuation switches per hop). Two goroutines
     * passing the turn back and forth over unbuffered channels (a ping-pong, a request and its
     * reply) cost Go two gogo switches a round trip, a few ns each. Here a switch is a JDK
     * continuation freeze and thaw, about 60 ns a pair on this project's VMs, plus a pass through
     * schedule and findRunnable. So when a goroutine A is about to park in a plain channel send
     * or receive (goparkUnlocked: its sudog is queued and the channel unlocked) and the G in its
     * P's runnext is B, the goroutine whose hand-off readied A last (G.readier), A's own frames
     * run B: Continuation.run of B from inside A's continuation, a nested continuation the JDK
     * supports, on the same M and P, as the M would have run B from runnext next (B inherits
     * the slice, the clock look of "The quantum without sysmon" is made as for any runnext
     * hand-off). When B yields, control comes back into A's frames, and what B asked for is
     * done as the M does it (execute: park, Gosched, preemption, exit). If B's hand-off readied
     * A meanwhile, A is READIED, as a G readied between its unlock and its yield always was
     * (goready does not queue it, see goparkUnlocked), and A goes on: it was never frozen, nor
     * thawed, and no scheduler pass ran for it. Otherwise A parks as before. A round trip of a
     * pair is then one freeze and one thaw instead of two of each: the 1-P ping-pong went from
     * ~335 to ~220 ns a round trip (bench/results/NOTES.md, issue 48).
     *
     * While B runs on top, A is RUNNING (it is on its way into its park), its P's runnext holds
     * no G of the pair, and M.nested is set: B never runs another goroutine on top of itself,
     * so the M's stack holds at most two goroutines' frames. What this changes, and how:
     *  - A, once readied, cannot be run by another P while B runs above it, as it could be
     *    from runnext. Readied by B, A waits for B's next park, as a G in runnext waits for the
     *    running G on its P; and as for one, goready wakes a spinning M, which, if B still runs
     *    above the readied A after Go's runnext-steal pause, asks B to yield at its next safe
     *    point (unburyHost): B goes to the global queue (that M takes it) and A goes on, so the
     *    two run in parallel as after Go's steal of runnext. Readied by anyone else (a third
     *    goroutine, a platform thread), A does not wait: the waker asks B to yield at once.
     *    A B that never reaches a safe point keeps A under it (as it keeps its own P: see
     *    Sysmon, "Hogs").
     *  - B must not block its M while A lies under it: before a syscall or lockOSThread B
     *    steps out (leaveHost: back into runnext, A goes on or parks, and B's call proceeds when
     *    an M runs it at the top of its stack). A B pinned by a native frame cannot step out and
     *    makes its syscall on top of A.
     *  - Nothing the M looks at before runnext is skipped: B is not run on top when this P has
     *    a due timer or it is the global queue's turn (every 61st schedtick), when the world is
     *    stopping or the runtime halting, when A is pinned (procPin) or locked to its thread,
     *    when B is locked to another M, or while a trace is recorded (its events assume one G
     *    per P); under randomizeScheduler half the time, so that tests see both orders.
     *  - A goroutine snapshot shows A as running, not as waiting on its channel, for as long
     *    as B runs: A has not parked yet.
     *
     * Why it is off by default. A B that blocks its thread in the JDK (a monitor, a latch, a
     * future's get, I/O not wrapped in Go.syscall) cannot step out: nothing tells the runtime.
     * Sysmon lends a spare P for the blocked M as always, and that P runs every other goroutine,
     * but not A: A's frames are under B's on the blocked thread's stack, and no other M can
     * resume them. Without the hand-off on top, A would wait in runnext and the spare P would
     * steal it. So a B that waits in the JDK for something A does next never wakes (a request
     * sent to A over a channel and its answer awaited in a CompletableFuture, say);
     * DirectHandOffTest.aHostGoesOnWhileItsGuestBlocksInTheJdk is that program. The runtime
     * cannot see such a wait coming, so it cannot choose per hand-off: a program chooses for
     * all of its goroutines (docs/scheduler.md, "Direct hand-off").
     */

    /**
     * Runs the partner in gp's runnext on top of gp's frames if the rules of "Direct hand-off"
     * allow. Returns true when gp was readied meanwhile (it goes on without parking), false when
     * it must park as usual. Executed only by gp, in goparkUnlocked, its waiter queued.
     */
    private boolean runPartnerOnTop(G gp) {
        if (!sched.directHandOff) {
            return false;
        }
        M mp = gp.m;
        P pp = mp.p;
        if (mp.nested || pp == null || gp.locks != 0 || gp.lockedm != null) {
            return false;
        }
        G b = pp.runq.peekNext();
        if (b == null || (byte) b.goid != gp.readier || !b.chained || b.lockedm != null) {
            return false;
        }
        if (sched.trace.on || sched.gcwaiting || sched.stopping
                || (sched.randomizeScheduler && (pp.cheaprand() & 1) == 0)) {
            return false;
        }
        long wake = pp.timers.wakeTime();
        if ((wake != 0 && wake <= sched.nanotime())
                || (pp.schedtick() % GLOBAL_RUNQ_CHECK == 0 && !sched.runq.isEmpty())) {
            return false; // findRunnable runs those first: let the M see to them
        }
        b = pp.runq.getNext();
        if (b == null) {
            return false; // a thief took it
        }
        if (sliceExpired(pp)) {
            preemptChain(pp, b);
            return false;
        }
        pp.count(P.C_NESTED);
        mp.nested = true;
        try {
            do {
                b = execute(mp, b, true);
                if (b != null && (sched.stopping || gp.status() == G.READIED)) {
                    if (!sched.stopping) {
                        // b's park was cancelled (readied before it parked) while gp was readied
                        // too: gp goes on, b waits in runnext as after any hand-off.
                        runqput(mp.p, b, true);
                    }
                    b = null;
                }
            } while (b != null);
        } finally {
            mp.nested = false;
            mp.hostReady = false;
        }
        mp.setCurg(gp);
        if (gp.status() != G.READIED) {
            return false;
        }
        gp.readiedToRunning();
        pp = mp.p;
        pp.count(P.C_SCHEDULES);
        recordRunnableLatency(pp, gp);
        if (sched.trace.on) {
            sched.trace.recordAt(pp, System.nanoTime(), gp.goid, Trace.K_GO_START, 0); // tracing began meanwhile
        }
        return true;
    }

    /**
     * gp, RUNNING, was just marked READIED by readier (null: not a goroutine). If gp is a host
     * whose guest runs on top of it (see "Direct hand-off"): readied by anyone else, the guest is
     * asked to yield at its next safe point, so that gp goes on; readied by the guest itself, gp
     * is left to the guest's next park, as a G in runnext is to the running G on its P, and as
     * for one, a spinning M is woken that may ask the guest to step aside if it runs on
     * (unburyHost). Racy reads of gp's M: a stale answer costs at most one early preemption.
     * Can be executed by any thread.
     */
    private static void hostReadied(G gp, G readier) {
        M hm = gp.m;
        if (hm != null && hm.nested) {
            G guest = hm.curg();
            if (guest == null || guest == gp) {
                return;
            }
            if (guest != readier) {
                guest.preempt = true;
            } else {
                hm.hostReady = true; // hm is the caller's own M: the guest runs on it
                gp.sched.scheduler.wakep();
            }
        }
    }

    /**
     * A thief's runnext steal, for a host under its guest (see "Direct hand-off"): p2's M runs a
     * guest that readied its host, which no other P can take from there. As grab does before it
     * takes a running victim's runnext, the thief pauses (Go's usleep(3)); if the same guest
     * still runs above its readied host then, it is asked to yield at its next safe point (to
     * the global queue, where this thief finds it), and the host goes on: the two run in
     * parallel, as they would after Go's thief took the host from runnext. A pair that parks
     * in the meantime has run another hand-off (p2's C_NESTED moved on): left alone, as grab
     * leaves a refilled runnext. Returns whether p2 held such a host (the thief then looks again,
     * as after a back-off). Racy reads of p2's M; a stale one costs an early preemption.
     * Executed by a spinning M on its last steal pass.
     */
    private static boolean unburyHost(P p2) {
        M vm = p2.m;
        if (vm == null || !vm.nested || !vm.hostReady) {
            return false;
        }
        long nests = p2.counter(P.C_NESTED);
        LockSupport.parkNanos(3_000);
        if (p2.m == vm && vm.nested && vm.hostReady && p2.counter(P.C_NESTED) == nests) {
            G guest = vm.curg();
            if (guest != null) {
                guest.preempt = true;
            }
        }
        return true;
    }

    /**
     * A goroutine about to enter a syscall or wire itself to its thread, running on top of a
     * parked partner (see "Direct hand-off"), steps out first: it yields into runnext
     * (OP_UNNEST, not chained, so that its partner does not take it on top again) and proceeds
     * when an M runs it. Without this its host would stay under a blocked M, and a host the
     * syscall waits for would never run. Pinned (a native frame), it cannot, and stays.
     * Executed only by gp.
     */
    static void leaveHost(G gp) {
        M mp = gp.m;
        if (mp != null && mp.nested) {
            assert mp.curg() == gp : "leaveHost: goroutine " + gp.goid + " is not the one on top";
            gp.op = G.OP_UNNEST;
            if (!Coroutine.yieldToScheduler()) {
                gp.op = G.OP_NONE;
            }
        }
    }

    /**
     * After a failed {@link #goparkUnlocked} whose waiter a waker had already taken: waits for that
     * waker's goready (it dequeued the waiter under the lock and readies it right after
     * unlocking), then continues as if woken.
     */
    static void awaitReadied(G gp) {
        while (!gp.tryCasgstatus(G.READIED, G.RUNNING)) {
            Thread.yield(); // the waker is between its unlock and its goready
        }
    }

    /**
     * The error of a park attempted inside a {@code Go.syscall} body without leaving the syscall
     * first: every blocking operation must go through {@link #syscallCallback}. A bug in the
     * runtime or in code calling gopark directly.
     */
    private static IllegalStateException notInSyscall(G gp, WaitReason reason) {
        return new IllegalStateException("goroutine " + gp.goid + " cannot park (" + reason
                + ") inside a syscall: the operation must leave the syscall first (Scheduler.syscallCallback)");
    }

    /** The error of a park that a pinned goroutine cannot make. */
    static IllegalStateException cannotPark(G gp, WaitReason reason) {
        return new IllegalStateException("goroutine " + gp.goid + " cannot park (" + reason
                + ") while pinned: inside Go.procPin, or with a native frame on its stack");
    }

    /** Gosched: the current G goes to the global queue. Executed only by a goroutine. */
    static void gosched() {
        G gp = getg();
        if (gp == null) {
            Thread.yield();
            return;
        }
        if (gp.status() == G.SYSCALL) {
            syscallCallback(gp, () -> {
                gosched();
                return null;
            });
            return;
        }
        gp.op = G.OP_GOSCHED;
        if (!yieldToScheduler(gp)) {
            gp.op = G.OP_NONE; // pinned: a yield is only a hint
        }
    }

    /**
     * A safe point: if the current G was asked to yield, yield now.
     * Executed only by a goroutine (a no-op elsewhere).
     */
    static void checkpoint() {
        G gp = getg();
        if (gp != null) {
            checkpoint(gp);
        }
    }

    /**
     * {@link #checkpoint()} for the running goroutine gp, found once by the operation calling it.
     * Inside a syscall it does nothing: the G holds no P to give up, and exitsyscall keeps the
     * request for the first safe point after it (Go's exitsyscall restores stackPreempt).
     * Executed only by gp.
     */
    static void checkpoint(G gp) {
        if (gp.preempt && gp.locks == 0 && gp.status() == G.RUNNING) {
            gopreempt(gp);
        }
    }

    /** Go: runtime/proc.go gopreempt_m. Executed only by gp itself. */
    static void gopreempt(G gp) {
        gp.op = G.OP_PREEMPT;
        if (!yieldToScheduler(gp)) {
            gp.op = G.OP_NONE;
        }
    }

    /** Go's runtime_canSpin, for sync.Mutex. Can be executed by any thread. */
    static boolean canSpin(int iter) {
        if (iter >= ACTIVE_SPIN || Runtime.getRuntime().availableProcessors() <= 1) {
            return false;
        }
        M mp = M.current();
        if (mp == null || mp.p == null) {
            return true; // a platform thread: spinning briefly is its only alternative to parking
        }
        Sched s = mp.sched;
        if (s.gomaxprocs <= s.npidle.get() + s.nmspinning.get() + 1) {
            return false;
        }
        return mp.p.runq.isEmpty();
    }

    /** Go's procyield(active_spin_cnt). */
    static void doSpin() {
        for (int i = 0; i < ACTIVE_SPIN_CNT; i++) {
            Thread.onSpinWait();
        }
    }

    // =============================================================================================
    // Goroutine creation and exit
    // =============================================================================================

    /**
     * Creates a goroutine running fn. From a goroutine of this runtime it goes to runnext of the
     * current P; from anywhere else to the global queue. Then wakep.
     * Can be executed by any thread.
     * Go: runtime/proc.go newproc
     */
    void newproc(Runnable fn) {
        newproc(fn, getg());
    }

    /** {@link #newproc(Runnable)} called by curg, the running goroutine (or null: not one). */
    void newproc(Runnable fn, G curg) {
        if (fn == null) {
            throw new NullPointerException("go of nil func value");
        }
        M mp = curg != null ? curg.m : null;
        // A goroutine of this runtime inside a syscall holds no P: its G goes global, like one
        // from outside, but is not refused by a shutdown in progress (it is the runtime's own).
        P pp = curg != null && curg.sched == sched ? mp.p : null;
        if (pp == null) {
            if (sched.closing && (curg == null || curg.sched != sched)) {
                throw new java.util.concurrent.RejectedExecutionException("gosched runtime is shut down");
            }
            G newg = newG(fn, null);
            newg.goid = sched.goidgen.incrementAndGet();
            describe(newg, fn, curg);
            if (curg != null && curg.bubble != null && curg.sched == sched) {
                curg.bubble.started(newg); // a bubble goroutine inside Go.syscall: still its bubble's
            }
            sched.spawnedOutside.incrementAndGet();
            trackRunnable(newg, ThreadLocalRandom.current().nextInt());
            if (sched.trace.on) {
                sched.trace.record(null, newg.goid, Trace.K_GO_CREATE, -1);
            }
            globrunqputTakingLock(newg);
            wakep();
            return;
        }
        G newg = newG(fn, pp);
        newg.goid = nextGoid(pp);
        describe(newg, fn, curg);
        if (curg.bubble != null) {
            curg.bubble.started(newg); // children belong to their creator's bubble (Go: newproc1)
        }
        pp.count(P.C_SPAWNED);
        trackRunnable(newg, pp.cheaprand());
        if (sched.trace.on) {
            sched.trace.recordUntimed(pp, newg.goid, Trace.K_GO_CREATE, curg.goid);
        }
        newg.chained = true;
        runqput(pp, newg, true);
        wakep();
    }

    /**
     * A new G for fn, registered in allgs through pp's buffers (or at once without a P).
     *
     * <p>JVM departure: Go takes a dead G off the P's free list (gfget) when it has one, to reuse
     * its stack. Here every goroutine gets a new G: a continuation cannot be restarted, so there
     * is no stack to reuse, and a recycled G is an old object by its second use: the writes that
     * start and park it then go through G1's card-marking barrier, and one freed on the other P
     * comes back through the other core's cache. Measured (bench/results/NOTES.md), with AllGs'
     * batches: spawn 2.66x faster, the chain of 10,000 1.97x, fork-join 1.23x.
     */
    private G newG(Runnable fn, P pp) {
        G gp = new G(sched, pp != null ? pp.allgsBuffers : null);
        gp.body = fn;
        gp.coroutine = new Coroutine(gp);
        gp.initStatus(G.RUNNABLE);
        return gp;
    }

    /**
     * Records who created newg, where, and its inherited labels (Go: newproc1 sets parentGoid,
     * gopc and copies the creator's labels), in the G and in its AllGs.Ref for a leak report.
     * creator is the running goroutine, or null: then a platform thread's Go.withLabels labels.
     * Executed only by the creating thread, before newg is queued.
     */
    private static void describe(G newg, Runnable fn, G creator) {
        java.util.Map<String, String> labels = creator != null ? creator.labels() : Go.threadLabels();
        AllGs.Ref r = newg.ref;
        r.goid = newg.goid;
        r.parentGoid = creator != null ? creator.goid : 0;
        r.labels = labels;
        r.createdAt = Traceback.creationFrame(fn);
        if (newg.sched.trace.on && !labels.isEmpty()) {
            newg.sched.trace.recordLabels(newg.goid, labels);
        }
    }

    /** Owner P only. Go: newproc1's goid cache. */
    private long nextGoid(P pp) {
        if (pp.goidcache == pp.goidcacheend) {
            long end = sched.goidgen.addAndGet(GOID_CACHE_BATCH);
            pp.goidcache = end - GOID_CACHE_BATCH + 1;
            pp.goidcacheend = end + 1;
        }
        return pp.goidcache++;
    }

    /** Decides whether this runnable transition is timed (see LatencyBuckets). */
    void trackRunnable(G gp, int rnd) {
        track(gp, LatencyBuckets.trackedSince(rnd), 1);
    }

    /** {@link #trackRunnable} for a G a running goroutine readied (see LatencyBuckets.HAND_OFF_TRACKING_PERIOD). */
    void trackHandOff(G gp, int rnd) {
        track(gp, LatencyBuckets.handOffTrackedSince(rnd), LatencyBuckets.HAND_OFF_WEIGHT);
    }

    private static void track(G gp, long since, int weight) {
        gp.runnableSince = since;
        if (since != 0) {
            gp.runnableWeight = (byte) weight;
        }
    }

    /**
     * The G finished: it is dropped (see newG: Gs are not recycled) and its Ref retired, through
     * the P's buffers when the M holds one, so that its collection is no leak. The fields
     * cleared here let go of what the goroutine held, for anything still pointing at the G.
     * Executed only by the M that ran it. Go: goexit0, gdestroy
     */
    private void goexit0(M mp, G gp) {
        gp.casgstatus(G.RUNNING, G.DEAD);
        if (gp.bubble != null) {
            gp.bubble.exited(gp);
        }
        gp.m = null;
        gp.body = null;
        gp.coroutine = null;
        gp.param = null;
        P pp = mp.p;
        sched.allgs.retire(gp.ref, pp != null ? pp.allgsBuffers : null);
        if (pp != null) {
            pp.count(P.C_EXITED);
        } else {
            sched.lock.lock();
            try {
                sched.exitedWithoutP++;
            } finally {
                sched.lock.unlock();
            }
        }
    }

    // =============================================================================================
    // Run queues
    // =============================================================================================

    /**
     * Puts gp on pp's local queue: into runnext when next (the old runnext is kicked to the
     * tail), else at the tail; a full ring spills half of itself to the global queue.
     * Executed only by the owner P.
     * Go: runtime/proc.go runqput
     */
    void runqput(P pp, G gp, boolean next) {
        assert ownedByCaller(pp) : "runqput: not the owner of " + pp;
        if (sched.randomizeScheduler && next && (pp.cheaprand() & 1) == 0) {
            next = false; // half the time the new G waits its turn instead of running next
        }
        if (next) {
            gp = pp.runq.putNext(gp);
            if (gp == null) {
                return;
            }
        }
        while (!pp.runq.putTail(gp)) {
            if (runqputslow(pp, gp)) {
                break;
            }
        }
        wakeNapper(); // stealable work (see "Napping beside a hand-off chain")
    }

    /**
     * Moves half of pp's full ring plus gp to the global queue in one batch.
     * Executed only by the owner P.
     * Go: runtime/proc.go runqputslow
     */
    private boolean runqputslow(P pp, G gp) {
        assert ownedByCaller(pp) : "runqputslow: not the owner of " + pp;
        G[] batch = pp.runq.overflowBatch;
        int n = pp.runq.grabHalfForOverflow(batch);
        if (n == 0) {
            return false;
        }
        batch[n] = gp;
        if (sched.randomizeScheduler) {
            // The spilled half reaches the global queue in a random order (Fisher-Yates).
            for (int i = 1; i <= n; i++) {
                int j = Integer.remainderUnsigned(pp.cheaprand(), i + 1);
                G t = batch[i];
                batch[i] = batch[j];
                batch[j] = t;
            }
        }
        for (int i = 0; i < n; i++) {
            batch[i].schedlink = batch[i + 1];
        }
        G first = batch[0];
        G last = batch[n];
        Arrays.fill(batch, 0, n + 1, null); // the batch array is reused: drop references
        sched.lock.lock();
        try {
            sched.runq.putBatch(first, last, n + 1);
        } finally {
            sched.lock.unlock();
        }
        return true;
    }

    /** Puts gp on the global queue, taking sched.lock. Can be executed by any thread. */
    void globrunqputTakingLock(G gp) {
        sched.lock.lock();
        try {
            sched.runq.put(gp);
        } finally {
            sched.lock.unlock();
        }
        wakeNapper();
    }

    /**
     * Takes a batch from the global queue: returns the first G and moves up to n-1 more into
     * pp's ring. n' = min(n, size, size/GOMAXPROCS + 1), so one P cannot drain it.
     * sched.lock must be held; executed only by the owner P.
     * Go: runtime/proc.go globrunqgetbatch
     */
    private G globrunqgetbatch(P pp, int max) {
        assert lockHeld(sched.lock) : "globrunqgetbatch: sched.lock not held";
        assert ownedByCaller(pp) : "globrunqgetbatch: not the owner of " + pp;
        int size = sched.runq.size();
        if (size == 0) {
            return null;
        }
        int n = Math.min(size, size / Math.max(1, sched.gomaxprocs) + 1);
        n = Math.min(n, max);
        G gp = sched.runq.get();
        for (int i = 1; i < n; i++) {
            G g = sched.runq.get();
            if (!pp.runq.putTail(g)) {
                sched.runq.putHead(g); // cannot happen: a P only takes a batch when its ring is empty
                break;
            }
        }
        return gp;
    }

    // =============================================================================================
    // The scheduling loop
    // =============================================================================================

    /** The body of every M thread. Go: runtime/proc.go mstart */
    void mstart(M mp) {
        try {
            P pp = mp.nextp;
            if (pp != null) {
                mp.nextp = null;
                acquirep(mp, pp);
            }
            schedule(mp);
        } finally {
            if (mp.p != null) {
                releasep(mp);
            }
            sched.mcount.decrementAndGet();
        }
    }

    /**
     * One M's scheduling loop: find a G, run it, act on how it yielded. Returns only when the
     * runtime stops.
     * Go: runtime/proc.go schedule
     */
    private void schedule(M mp) {
        for (;;) {
            if (mp.exiting) {
                return; // its locked goroutine ended locked (see "LockOSThread")
            }
            if (mp.p == null) {
                // exitsyscall0 parked without a P and was woken with one, or for shutdown.
                if (sched.stopping) {
                    return;
                }
                stopm(mp);
                continue;
            }
            G gp = findRunnable(mp);
            if (gp == null) {
                return; // stopping
            }
            if (mp.spinning) {
                resetspinning(mp);
            }
            boolean inheritTime = mp.inheritTime;
            if (inheritTime && gp.chained && sliceExpired(mp.p)) {
                preemptChain(mp.p, gp);
                continue;
            }
            while (gp != null) {
                gp = execute(mp, gp, inheritTime);
                inheritTime = true;
                if (gp != null && sched.stopping) {
                    // A panic halted the runtime (GoRuntime.halt): a chain of hand-offs ends here
                    // too, its next G is abandoned with the rest.
                    return;
                }
            }
        }
    }

    /*
     * The quantum without sysmon. Go's slice ends when sysmon sees the same schedtick for 10 ms
     * (retake). sysmon is a thread like any other to the OS, and on a loaded machine it may not
     * run for a long time: measured on this 2-core box at load 10-17, a 20 us parkNanos of sysmon
     * returned after 170 ms, while the M running a ping-pong pair (Go's TestPingPongHog) ran all
     * along, so the pair kept the only P for the whole 100 ms window and the other pair got one
     * turn (81,000,000 against 1,000; about 1 run in 40 on a fresh JVM, where warm-up keeps
     * the machine busiest). Go's sysmon is exposed the same way in principle, but its process has
     * no JIT and no GC threads competing with it, and its async preemption stops a hog at
     * sysmon's next tick; here nothing stops a chain of runnext hand-offs until sysmon runs.
     *
     * So the M itself also looks at the slice where a chain hands off (a runnext G about to
     * inherit it): at every hand-off when they come quantum/16 or more apart (a pair doing real
     * work per turn); in a fast chain at every second, fourth, ... up to every 64th, the period
     * doubling while a whole period of hand-offs takes under quantum/64. A look is one clock
     * read, 25 ns on this project's VMs against a hand-off of 150-200 ns: at every 8th, as
     * before, it was 3 ns of each (bench/results/NOTES.md, "Two clock reads fewer per
     * hand-off"). Between two looks at most quantum/32 passes while the chain keeps its pace; a
     * chain that slows down at once is looked at again after at most 64 of its slower hand-offs,
     * as before after 8. A slice began no later than the first look at it, the M's or sysmon's.
     * Once it is two quanta old, an age sysmon reaches only if it missed its ticks (it preempts a
     * slice 10-20 ms in: the quantum plus at most one of its 10 ms sleeps), the chain is
     * preempted there: the G it was about to hand the P to goes to the global queue, where
     * sysmon's preemption would have sent the running G. Meant as a backstop, not a second sysmon
     * (a G woken by a timer still runs at once on the slice it inherits); measured, it also ends
     * slices sysmon let run past 20 ms with sysmon running (sysmon alone preempted a ping-pong
     * pair about every 40 ms at load 1), which costs two-P ping-pong 3-11%
     * (bench/results/2026-12-01-issue19.md). The M runs exactly when the chain does, so a slice ends within two quanta plus a few hand-offs
     * whatever the OS does to sysmon. Only goroutine-to-goroutine hand-offs count (G.chained): a
     * G a timer or the poller readied into runnext is not part of the chain of the G preempted
     * before it, and runs at once as in Go. Only with sysmon on (a runtime without sysmon does not
     * preempt at all), and on sysmon's clock (SchedulerConfig.nanoClock).
     */

    /**
     * The chain of hand-offs on pp used up its slice: preempt it where its next G, gp, would
     * have inherited the slice. gp goes to the global queue's tail as a preempted one would
     * (gopreempt_m), and the P looks for other work. See "The quantum without sysmon".
     * Executed only by the owner of pp.
     */
    private void preemptChain(P pp, G gp) {
        pp.count(P.C_PREEMPTIONS);
        trackRunnable(gp, pp.cheaprand());
        if (sched.trace.on) {
            sched.trace.recordUntimed(pp, gp.goid, Trace.K_GO_PREEMPT, 0);
        }
        globrunqputTakingLock(gp);
        wakep();
    }

    /** The most runnext hand-offs the owner of a P lets pass between two reads of the clock (a power of two). */
    static final int HANDOFF_CLOCK_PERIOD_MAX = 64;

    /**
     * Whether the time slice of pp, which its M is about to pass on through runnext to a G a
     * goroutine handed off to (G.chained), is used up (see "The quantum without sysmon").
     * Executed only by the owner of pp.
     */
    private boolean sliceExpired(P pp) {
        assert ownedByCaller(pp) : "sliceExpired: not the owner of " + pp;
        if (--pp.handoffs > 0 || sched.quantumNanos == 0) {
            return false;
        }
        long now = sched.nanotime();
        // Hand-offs far apart (a pair doing real work per turn) are each looked at; a fast chain
        // is sampled, less often the faster it is. Either way a look comes at most a few
        // hand-offs after the quantum.
        long since = now - pp.handoffClock;
        int period = pp.handoffPeriod;
        if (since >= sched.quantumNanos / 16) {
            period = 1;
        } else if (since < sched.quantumNanos / 64 && period < HANDOFF_CLOCK_PERIOD_MAX) {
            period <<= 1;
        }
        pp.handoffPeriod = period;
        pp.handoffs = period;
        pp.handoffClock = now;
        long tick = pp.schedtick();
        if (pp.sliceTick != tick) {
            pp.sliceTick = tick;
            pp.sliceSeen = now;
        }
        // The slice began no later than the first look at it, ours or sysmon's (sysmon's fields
        // are its own, read racily here: a stale pair only makes this look later, never earlier).
        long seen = pp.sliceSeen;
        if (pp.sysmonSchedtick == tick && pp.sysmonSchedwhen < seen) {
            seen = pp.sysmonSchedwhen;
        }
        return now - seen >= 2 * sched.quantumNanos;
    }

    /**
     * Runs gp on mp until it yields or ends. Returns a G to run at once (a park that its
     * commit cancelled), or null.
     * Executed only by mp, holding a P.
     * Go: runtime/proc.go execute
     */
    private G execute(M mp, G gp, boolean inheritTime) {
        M lockedm = gp.lockedm;
        if (lockedm != null && lockedm != mp) {
            startlockedm(mp, gp, lockedm);
            return null;
        }
        P pp = mp.p;
        if (gp.m != mp) {
            // See G.m: a G that runs again on the M it last ran on (always on one P) stores nothing.
            gp.m = mp;
        }
        gp.casgstatus(G.RUNNABLE, G.RUNNING);
        if (gp.preempt) {
            gp.preempt = false; // a volatile store is a StoreLoad fence: made only when a request is pending
        }
        if (!inheritTime) {
            pp.incSchedtick();
        }
        pp.count(P.C_SCHEDULES);
        recordRunnableLatency(pp, gp);
        if (sched.trace.on) {
            long ts = mp.traceClock;
            mp.traceClock = 0;
            sched.trace.recordAt(pp, ts != 0 ? ts : System.nanoTime(), gp.goid, Trace.K_GO_START, 0);
        }
        // Published last, after the status, the count and the cleared preempt request: sysmon
        // reads curg to ask a G to yield and to judge whether it ignored the request (the same G
        // and the same schedule count a quantum later). Published first, sysmon could ask gp in
        // the window before its old request was cleared here, losing the new one, or record
        // the count of the previous run for this one; either way a G that polls its safe points
        // could be taken for a hog a quantum later and lent a spare P. (Found by reading this
        // code while chasing PreemptAgentIT's spurious lends; its prints did not show this case.)
        mp.setCurg(gp);

        gp.coroutine.run();

        mp.setCurg(null);
        if (mp.isInterrupted()) {
            // An interrupt does not outlive the goroutine turn that saw it: the next goroutine
            // on this M, its notesleep and its netpoll must not inherit it (see "Interrupts" in M).
            Thread.interrupted();
        }
        if (sched.trace.on) {
            mp.traceClock = sched.trace.switchClock(mp.p); // the end of this run; see M.traceClock
        }
        if (gp.coroutine.isDone()) {
            if (sched.trace.on) {
                sched.trace.recordAt(mp.p, mp.traceClock, gp.goid, Trace.K_GO_END, 0);
            }
            if (gp.lockedm != null) {
                exitWithLockedM(mp, gp);
                return null;
            }
            goexit0(mp, gp);
            return null;
        }
        int op = gp.op;
        gp.op = G.OP_NONE;
        if (sched.trace.on) {
            if (op == G.OP_GOSCHED) {
                sched.trace.recordAt(mp.p, mp.traceClock, gp.goid, Trace.K_GO_SCHED, 0);
            } else if (op == G.OP_PREEMPT) {
                sched.trace.recordAt(mp.p, mp.traceClock, gp.goid, Trace.K_GO_PREEMPT, 0);
            }
        }
        switch (op) {
            case G.OP_PARK -> {
                return parkM(mp, gp);
            }
            case G.OP_GOSCHED -> goschedImpl(mp, gp, false);
            case G.OP_PREEMPT -> goschedImpl(mp, gp, true);
            case G.OP_EXITSYSCALL -> exitsyscall0(mp, gp);
            case G.OP_UNNEST -> {
                assert mp.nested : "OP_UNNEST outside a direct hand-off";
                gp.yieldedToRunnable();
                gp.chained = false; // not taken on top again: see leaveHost
                runqput(mp.p, gp, true);
            }
            default -> throw new IllegalStateException("goroutine " + gp.goid + " yielded without a reason");
        }
        return null;
    }

    /** The runnable-to-running latency of gp, if it was picked for timing (see LatencyBuckets). Owner of pp only. */
    private static void recordRunnableLatency(P pp, G gp) {
        long since = gp.runnableSince;
        if (since != 0) {
            gp.runnableSince = 0;
            long d = System.nanoTime() - since;
            pp.recordLatency(LatencyBuckets.bucket(d), d, gp.runnableWeight);
        }
    }

    /** Go: runtime/proc.go park_m. Executed only by mp, after gp yielded. */
    private G parkM(M mp, G gp) {
        ParkCommit commit = gp.parkCommit;
        Object arg = gp.parkArg;
        gp.parkCommit = null;
        if (arg != null) {
            gp.parkArg = null;
        }
        long goid = gp.goid;
        int reasonCode = gp.waitreason; // read now: once committed, gp may run and park again elsewhere
        if (!gp.tryCasgstatus(G.RUNNING, G.WAITING)) {
            // READIED: it parked after releasing its lock (goparkUnlocked) and a waker has
            // already taken its waiter. It does not park; run it again.
            gp.casgstatus(G.READIED, G.RUNNABLE);
            return gp;
        }
        // From here on another M may ready and run gp as soon as commit releases its lock.
        if (commit != null && !commit.commit(gp, arg)) {
            gp.casgstatus(G.WAITING, G.RUNNABLE);
            return gp;
        }
        if (gp.bubble != null) {
            gp.bubble.parked(gp); // after the commit: see "Counting" in Bubble
        }
        if (sched.trace.on) {
            sched.trace.recordAt(mp.p, mp.traceClock, goid, Trace.K_GO_PARK, reasonCode - 1); // the ordinal, -1 for none
        }
        return null;
    }

    /** Go: runtime/proc.go goschedImpl. Executed only by mp, after gp yielded. */
    private void goschedImpl(M mp, G gp, boolean preempted) {
        gp.yieldedToRunnable();
        if (preempted && mp.p != null) {
            mp.p.count(P.C_PREEMPTIONS);
        }
        trackRunnable(gp, mp.p != null ? mp.p.cheaprand() : 1);
        globrunqputTakingLock(gp);
        wakep();
    }

    /*
     * findRunnable's and stealWork's second results. Go returns (gp, inheritTime, tryWakeP) and
     * (gp, inheritTime, now, pollUntil, newWork); here the G is the return value and the rest is
     * written into the M's own fields (M.inheritTime, M.stealNewWork, M.stealPollUntil,
     * M.stealVictimBusy), read by the caller right after the call on the same thread.
     *
     * JVM departure: these were small result objects (a record per switch). On an Intel Xeon
     * with AVX-512, C2 zeroes such an object's body with a 512-bit register (vpxord zmm0) and
     * issues no vzeroupper afterwards, so the upper halves of the vector registers stay dirty
     * until the next vzeroupper; the first legacy-SSE instruction after that, in the JDK's
     * thaw of the goroutine about to run, stalled for a couple of hundred nanoseconds. perf put
     * a quarter of a 1-P Gosched round trip on one instruction at thaw's entry; -XX:UseAVX=2 or
     * -XX:MaxVectorSize=16 made it vanish, and so did this change without either flag
     * (bench/results/NOTES.md, "The dirty upper vector state"). So the path from a goroutine's
     * yield to the next run allocates nothing.
     */

    private static G foundFresh(M mp, G gp) {
        mp.inheritTime = false;
        return gp;
    }

    private static G foundInheriting(M mp, G gp) {
        mp.inheritTime = true;
        return gp;
    }

    /**
     * Finds a runnable G, in Go's order: this P's due timers, the global queue every 61st
     * tick, the local queue, the global queue, a non-blocking netpoll, stealing (with other
     * Ps' due timers on the last pass); then gives up the P, re-checks everything, and blocks
     * in netpoll until the earliest timer of all Ps (if it is the one poller) or parks.
     * Returns null only when the runtime is stopping; sets mp.inheritTime for the G it returns.
     * Executed only by mp, holding a P.
     * Go: runtime/proc.go findRunnable
     */
    private G findRunnable(M mp) {
        top:
        for (;;) {
            if (sched.stopping) {
                if (mp.spinning) {
                    mp.spinning = false;
                    sched.nmspinning.decrementAndGet();
                }
                return null;
            }
            P pp = mp.p;
            if (pp.spare && (pp.retiring || sched.gcwaiting)) {
                // The hog this spare was lent for yielded, or the world stops: give it back.
                sched.lending.retire(mp);
                stopm(mp);
                if (mp.p == null) {
                    return null;
                }
                continue;
            }
            if (sched.gcwaiting) {
                gcstopm(mp);
                continue;
            }

            // This P's due timers first: the Gs they ready land in its runnext.
            long now = 0;
            long pollUntil = 0;
            if (pp.timers.wakeTime() != 0) {
                now = sched.nanotime();
                pollUntil = Timers.checkTimers(pp, now);
            }

            // Fairness: without this two goroutines that keep readying each other would starve
            // the global queue forever.
            if (pp.schedtick() % GLOBAL_RUNQ_CHECK == 0 && !sched.runq.isEmpty()) {
                sched.lock.lock();
                G gp;
                try {
                    gp = sched.runq.get();
                } finally {
                    sched.lock.unlock();
                }
                if (gp != null) {
                    return foundFresh(mp, gp);
                }
            }

            G gp = pp.runq.getNext();
            if (gp != null) {
                return foundInheriting(mp, gp);
            }
            gp = pp.runq.getRing();
            if (gp != null) {
                return foundFresh(mp, gp);
            }

            if (!sched.runq.isEmpty()) {
                sched.lock.lock();
                try {
                    gp = globrunqgetbatch(pp, pp.runq.capacity() / 2);
                } finally {
                    sched.lock.unlock();
                }
                if (gp != null) {
                    return foundFresh(mp, gp);
                }
            }

            if (sched.trace.on) {
                sched.trace.anchor(mp.p, mp.traceClock);
            }
            mp.traceClock = 0; // past the fast path: the next GoStart reads the clock itself

            // Non-blocking netpoll, by one M at a time and only while nobody blocks in it: an
            // optimization, the blocking poller or sysmon would find these Gs too.
            Netpoll np = sched.netpoll;
            if (np.anyWaiters() && sched.lastpoll.get() != 0 && np.polling.compareAndSet(false, true)) {
                G list;
                try {
                    list = np.netpoll(0);
                } finally {
                    np.polling.set(false);
                }
                if (list != null) {
                    gp = list;
                    list = gp.schedlink;
                    gp.schedlink = null;
                    pp.count(P.C_NETPOLL_READY, 1 + injectglist(list));
                    gp.casgstatus(G.WAITING, G.RUNNABLE);
                    return foundFresh(mp, gp);
                }
            }

            // Spinning Ms are limited to half the busy Ps: beyond that they burn CPU for nothing.
            int procs = sched.gomaxprocs + sched.spares.length;
            if (mp.spinning || 2 * sched.nmspinning.get() < procs - sched.npidle.get()) {
                if (!mp.spinning) {
                    becomeSpinning(mp);
                }
                G stolen = stealWork(mp, pp, now);
                if (stolen != null) {
                    mp.handOffSeenAt = 0;
                    return stolen;
                }
                if (mp.stealNewWork) {
                    continue; // a timer ran (it may have readied a G somewhere) or the world stops
                }
                if (mp.stealVictimBusy) {
                    // A victim refilled its runnext while we paused to steal it: a hand-off chain
                    // (a ping-pong pair). Go round again, keeping our P and our spinning.
                    mp.handOffSeenAt = sched.nanotime();
                    continue;
                }
                if (mp.handOffSeenAt != 0 && napBesideHandOff(mp)) {
                    continue;
                }
                mp.handOffSeenAt = 0;
                long w = mp.stealPollUntil;
                if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                    pollUntil = w;
                }
            }

            // Nothing found: give up the P.
            P[] allpSnapshot = sched.allp;
            int procsSnapshot = sched.gomaxprocs;
            sched.lock.lock();
            try {
                if (sched.gcwaiting || sched.stopping) {
                    continue;
                }
                if (!sched.runq.isEmpty()) {
                    gp = globrunqgetbatch(pp, pp.runq.capacity() / 2);
                    if (gp != null) {
                        return foundFresh(mp, gp);
                    }
                }
                if (!mp.spinning && sched.needspinning == 1) {
                    // An M wanted to spin but found no idle P; we spin in its place.
                    becomeSpinning(mp);
                    continue;
                }
                releasep(mp);
                pidleput(pp);
            } finally {
                sched.lock.unlock();
            }

            // The delicate dance: drop spinning, then re-check everything a submitter may have
            // published while it still saw us spinning (see "Spinning and wakep").
            boolean wasSpinning = mp.spinning;
            if (mp.spinning) {
                mp.spinning = false;
                if (sched.nmspinning.decrementAndGet() < 0) {
                    throw new IllegalStateException("findRunnable: negative nmspinning");
                }
                if (!sched.runq.isEmpty()) {
                    sched.lock.lock();
                    P p2;
                    try {
                        p2 = pidlegetSpinning();
                        if (p2 != null) {
                            acquirep(mp, p2);
                            gp = globrunqgetbatch(p2, p2.runq.capacity() / 2);
                        }
                    } finally {
                        sched.lock.unlock();
                    }
                    if (p2 != null) {
                        becomeSpinning(mp);
                        if (gp != null) {
                            return foundFresh(mp, gp);
                        }
                        continue;
                    }
                }
                P p2 = checkRunqsNoP(allpSnapshot, procsSnapshot);
                if (p2 != null) {
                    acquirep(mp, p2);
                    becomeSpinning(mp);
                    continue;
                }
            }
            // Timers added or moved while we were letting go of the P. Go does this only for a
            // spinning M; every M does it here, because with a hogged P (see Sysmon) the M
            // going idle may be the only one left to sleep until that P's timers.
            pollUntil = checkTimersNoP(allpSnapshot, procsSnapshot, pollUntil);

            // Block in netpoll until the earliest timer, if we can be the one poller.
            if ((np.anyWaiters() || pollUntil != 0) && becomePoller(np)) {
                sched.pollUntil = pollUntil;
                now = sched.nanotime();
                long delay = pollUntil == 0 ? -1 : Math.max(0, pollUntil - now);
                G list;
                try {
                    list = sched.stopping ? null : np.netpoll(delay);
                } finally {
                    sched.pollUntil = 0;
                    sched.lastpoll.set(sched.nanotime() | 1);
                    np.polling.set(false);
                }
                P p2;
                sched.lock.lock();
                try {
                    p2 = sched.gcwaiting || sched.stopping ? null : pidleget();
                } finally {
                    sched.lock.unlock();
                }
                if (p2 == null) {
                    sched.netpollReadyNoP.addAndGet(injectglist(list));
                } else {
                    acquirep(mp, p2);
                    if (list != null) {
                        gp = list;
                        list = gp.schedlink;
                        gp.schedlink = null;
                        p2.count(P.C_NETPOLL_READY, 1 + injectglist(list));
                        gp.casgstatus(G.WAITING, G.RUNNABLE);
                        if (wasSpinning) {
                            becomeSpinning(mp);
                        }
                        return foundFresh(mp, gp);
                    }
                    if (wasSpinning) {
                        becomeSpinning(mp);
                    }
                    continue;
                }
            } else if (pollUntil != 0 && sched.lastpoll.get() == 0) {
                // Someone else polls: make sure it wakes for our earlier timer.
                long theirs = sched.pollUntil;
                if (theirs == 0 || theirs > pollUntil) {
                    np.netpollBreak();
                }
            }
            stopm(mp);
            if (mp.p == null) {
                return null; // woken for shutdown
            }
        }
    }

    /**
     * Makes the caller the one M blocked in netpoll: takes the polling flag and publishes
     * lastpoll = 0. Returns false if another M blocks there already. A non-blocking poll in
     * progress (it holds the flag with lastpoll != 0) ends within microseconds: wait for it.
     * Executed by an M without a P.
     * Go: the sched.lastpoll.Swap(0) != 0 test of findRunnable
     */
    private boolean becomePoller(Netpoll np) {
        for (;;) {
            if (np.polling.compareAndSet(false, true)) {
                sched.lastpoll.set(0);
                return true;
            }
            if (sched.lastpoll.get() == 0 || sched.stopping) {
                return false;
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Tries to steal a batch of Gs from another P; on the last pass also runs other Ps' due
     * timers (idle, running or hogged: the owner may not get to them in time) and may take
     * runnext. Spare Ps (see "Hogs" in Sysmon) are visited after allp, so their Gs do not wait
     * behind a hog either. {@code now} is a clock reading of the caller's, or 0 for none.
     * Returns the G to run (mp.inheritTime says whether it inherits the slice), or null with the
     * reason in mp's steal fields (see {@link #stealFailed}).
     * Executed only by mp, holding pp, spinning.
     * Go: runtime/proc.go stealWork
     */
    private G stealWork(M mp, P pp, long now) {
        RandomOrder order = sched.stealOrder;
        P[] allp = sched.allp;
        P[] spares = sched.spares;
        int n = order.count();
        long pollUntil = 0;
        boolean ranTimer = false;
        boolean victimBusy = false;
        for (int i = 0; i < STEAL_TRIES; i++) {
            boolean lastPass = i == STEAL_TRIES - 1;
            long c = order.start(pp.cheaprand());
            // allp in the random order, then the spares.
            for (int k = 0; k < n + spares.length; k++) {
                P p2;
                if (k < n) {
                    p2 = allp[RandomOrder.position(c)];
                    c = RandomOrder.next(c, n);
                } else {
                    p2 = spares[k - n];
                }
                if (sched.gcwaiting || sched.stopping) {
                    return stealFailed(mp, true, 0, false); // the world stops or the runtime does: look again
                }
                if (p2 == pp) {
                    continue;
                }
                if (lastPass) {
                    long w = p2.timers.wakeTime();
                    if (w != 0) {
                        if (now == 0 || w <= now) {
                            now = sched.nanotime();
                        }
                        int ran = p2.timers.check(now);
                        if (ran > 0) {
                            pp.count(P.C_TIMERS_FIRED, ran);
                            // The timers readied their Gs into our runnext.
                            G gp = pp.runq.getNext();
                            if (gp != null) {
                                return foundInheriting(mp, gp);
                            }
                            gp = pp.runq.getRing();
                            if (gp != null) {
                                return foundFresh(mp, gp);
                            }
                            ranTimer = true;
                        }
                        w = p2.timers.wakeTime();
                        if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                            pollUntil = w;
                        }
                    }
                }
                if (!p2.idle) {
                    boolean running = p2.status() == P.RUNNING;
                    RunQueue.Stolen stolen = pp.runq.steal(p2.runq, lastPass, running);
                    victimBusy |= stolen == RunQueue.Stolen.BACKED_OFF
                            || (stolen == RunQueue.Stolen.NOTHING && lastPass && running && unburyHost(p2));
                    G gp = stolen.gp();
                    if (gp != null) {
                        // The event before the counts: the counts are release stores, so whoever
                        // reads a steal in the stats (and stops a recording because of it) also
                        // finds its event in the trace. Counted first, the event of a steal at
                        // the end of a recording could miss it (TraceTest saw that on CI).
                        if (sched.trace.on) {
                            sched.trace.recordUntimed(pp, gp.goid, Trace.K_STEAL, ((long) p2.id << 32) | stolen.count());
                        }
                        pp.count(P.C_STEALS);
                        pp.count(P.C_STOLEN, stolen.count());
                        return foundFresh(mp, gp);
                    }
                }
            }
        }
        return stealFailed(mp, ranTimer, pollUntil, victimBusy);
    }

    /**
     * How long after its last back-off from a hand-off chain a spinning M that finds nothing
     * naps instead of giving up its P (see "Napping beside a hand-off chain").
     */
    static final long HAND_OFF_LINGER_NANOS = 1_000_000;

    /*
     * Napping beside a hand-off chain. Two goroutines readying each other (a ping-pong pair, a
     * chain of channel hops) keep one G in their P's runnext most of the time and the ring empty.
     * A spinning thief backs off from that runnext (RunQueue.grab), finds nothing else, and in Go
     * gives up its P and parks, usually when it happens to look between two puts; the pair's next
     * goready then sees an idle P and no spinner, and wakep wakes it through a futex. Measured on
     * the 2-P ping-pong: one such wake-up every 130-300 round trips, 3-6 context switches each.
     *
     * Instead, for HAND_OFF_LINGER_NANOS after a back-off, a thief that finds nothing keeps its P
     * and its spinning and naps (parkNanos of 3 us, some 50 us with Linux's timer slack, like the
     * pause in grab), then looks again. As a spinning M with a P it makes wakep return at once
     * for the pair's hand-offs. What a nap must not delay is work a thief can take: a put into any
     * P's ring (runqput's tail path, which spawn takes at every go) or into the global queue
     * unparks the napper (wakeNapper); a put into runnext alone does not, since that is the
     * pair's own G. Without that wake spawn lost 15-20% (the thief slept while the spawner's ring
     * filled). One M naps at a time (sched.napper); any other gives up its P as before.
     *
     * The napper's registration and a putter's ring store are not ordered by a full fence (that
     * would put a StoreLoad on every ring put), so a put racing the registration can miss the
     * napper: the nap then ends on its timer, as a missed wake-up costs one nap and nothing is
     * lost. The timers of the napper's own P wait at most one nap; other Ps' timers are run by
     * stealWork's last pass, as for any spinning M.
     */

    /**
     * Naps once beside a hand-off chain seen less than HAND_OFF_LINGER_NANOS ago, keeping mp's P
     * and its spinning; returns false (the caller gives up its P) when the chain is older or
     * another M naps already. Executed only by mp, holding a P, spinning.
     */
    private boolean napBesideHandOff(M mp) {
        if (sched.nanotime() - mp.handOffSeenAt >= HAND_OFF_LINGER_NANOS
                || !sched.napper.compareAndSet(null, mp)) {
            return false;
        }
        try {
            if (sched.runq.isEmpty() && !sched.stopping && !sched.gcwaiting) {
                mp.clearInterrupt(); // else parkNanos returns at once: see "Interrupts" in M
                LockSupport.parkNanos(3_000);
            }
        } finally {
            sched.napper.compareAndSet(mp, null);
        }
        return true;
    }

    /**
     * Ends the nap of the M napping beside a hand-off chain, if any: work a thief can take was
     * just put in a ring or the global queue. Without a napper, one load. Can be executed by any
     * thread.
     */
    private void wakeNapper() {
        M n = sched.napper.get();
        if (n != null && sched.napper.compareAndSet(n, null)) {
            LockSupport.unpark(n);
            sched.napperWakes.incrementAndGet();
        }
    }

    /**
     * Nothing stolen: records why for findRunnable and returns null. {@code newWork}: a timer ran
     * or the world stops, so everything is to be looked at again; {@code pollUntil}: the earliest
     * timer seen (0: none); {@code victimBusy}: a victim refilled its runnext while we paused to
     * steal it (see RunQueue.grab).
     */
    private static G stealFailed(M mp, boolean newWork, long pollUntil, boolean victimBusy) {
        mp.stealNewWork = newWork;
        mp.stealPollUntil = pollUntil;
        mp.stealVictimBusy = victimBusy;
        return null;
    }

    /**
     * Looks for a non-idle P with local work; if there is one, returns an idle P to run it.
     * Executed by an M without a P.
     * Go: runtime/proc.go checkRunqsNoP
     */
    private P checkRunqsNoP(P[] allp, int procs) {
        if (!anyPHoldsWork(allp, procs, true)) {
            return null;
        }
        sched.lock.lock();
        try {
            return pidlegetSpinning();
        } finally {
            sched.lock.unlock();
        }
    }

    /**
     * The earliest timer of every P (idle, running, hogged, spare), or pollUntil if earlier.
     * Lock-free. Executed by an M without a P.
     * Go: runtime/proc.go checkTimersNoP
     */
    private long checkTimersNoP(P[] allp, int procs, long pollUntil) {
        for (int i = 0; i < procs && i < allp.length; i++) {
            long w = allp[i].timers.wakeTime();
            if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                pollUntil = w;
            }
        }
        for (P p2 : sched.spares) {
            long w = p2.timers.wakeTime();
            if (w != 0 && (pollUntil == 0 || w < pollUntil)) {
                pollUntil = w;
            }
        }
        return pollUntil;
    }

    /**
     * A timer now due at when was added: make sure an M wakes for it. If an M blocks in netpoll
     * with a later deadline, break it out; if nobody polls, wake a spinning M (it will block in
     * netpoll for the timer if it finds nothing else).
     * Can be executed by any thread; sched.lock must not be held.
     * Go: runtime/proc.go wakeNetPoller
     */
    void wakeNetPoller(long when) {
        if (sched.lastpoll.get() == 0) {
            long theirs = sched.pollUntil;
            if (theirs == 0 || theirs > when) {
                sched.netpoll.netpollBreak();
            }
        } else {
            wakep();
        }
    }

    /**
     * Makes a list of WAITING Gs (linked through schedlink) runnable: without a P all go to the
     * global queue and as many idle Ps as Gs get an M; with a P, one G per idle P goes global
     * (with an M each), the rest to this P's ring, then wakep. Never into runnext: a batch of
     * network wake-ups must not jump ahead of the P's queue. Returns the number of Gs.
     * Can be executed by any thread; sched.lock must not be held.
     * Go: runtime/proc.go injectglist
     */
    int injectglist(G list) {
        if (list == null) {
            return 0;
        }
        M mp = M.current();
        P pp = mp != null && mp.sched == sched ? mp.p : null;
        int n = 0;
        for (G g = list; g != null; g = g.schedlink) {
            g.casgstatus(G.WAITING, G.RUNNABLE);
            trackRunnable(g, pp != null ? pp.cheaprand() : ThreadLocalRandom.current().nextInt());
            n++;
        }
        int toGlobal = pp == null ? n : Math.min(n, sched.npidle.get());
        if (toGlobal > 0) {
            sched.lock.lock();
            try {
                for (int i = 0; i < toGlobal; i++) {
                    G g = list;
                    list = g.schedlink;
                    sched.runq.put(g);
                }
            } finally {
                sched.lock.unlock();
            }
            wakeNapper();
            startIdle(toGlobal);
        }
        while (list != null) {
            G g = list;
            list = g.schedlink;
            g.schedlink = null;
            runqput(pp, g, false);
        }
        if (pp != null) {
            wakep();
        }
        return n;
    }

    /** Starts up to n Ms on idle Ps. sched.lock must not be held. Go: injectglist's startIdle */
    private void startIdle(int n) {
        for (; n > 0; n--) {
            P p2;
            sched.lock.lock();
            try {
                p2 = pidlegetSpinning();
            } finally {
                sched.lock.unlock();
            }
            if (p2 == null) {
                break;
            }
            startm(p2, false);
        }
    }

    // =============================================================================================
    // Spinning, waking and parking Ms
    // =============================================================================================

    /** Executed only by mp. Go: runtime/proc.go becomeSpinning */
    private void becomeSpinning(M mp) {
        mp.spinning = true;
        sched.nmspinning.incrementAndGet();
        sched.needspinning = 0;
    }

    /**
     * The spinning M found work: it stops spinning and wakes another spinner if there is work
     * left for one, so parallelism ramps up one M at a time.
     *
     * Go wakes one unconditionally here. This runtime first looks for work a spinner could take
     * (the global queue, any P's ring): when there is none, the spinner it would wake finds
     * nothing and parks again, and the futex wake-up it costs lands on the critical path of
     * the G this M is about to run (a goroutine readied from a platform thread while every P
     * is idle, the service's path: about 5 µs of a 30 µs wake-up on this VM). Liveness does not
     * depend on this wake-up: work published after the look below sees nmspinning already
     * decremented and wakes a spinner itself (the Dekker pair of "Spinning and wakep"), and a G
     * in a running P's runnext is its owner's to run.
     * Executed only by mp. Go: runtime/proc.go resetspinning
     */
    private void resetspinning(M mp) {
        mp.spinning = false;
        if (sched.nmspinning.decrementAndGet() < 0) {
            throw new IllegalStateException("resetspinning: negative nmspinning");
        }
        if (workForAnotherM()) {
            wakep();
        }
    }

    /** Whether the global queue or some P's ring holds a G that a spinning M could take. Racy. */
    private boolean workForAnotherM() {
        return !sched.runq.isEmpty() || anyPHoldsWork(sched.allp, sched.gomaxprocs, false);
    }

    /**
     * Whether a busy P among the first procs of allp, or a lent spare, holds a G in its ring, or
     * also in its runnext with withRunnext. An idle P holds none (pidleput). Racy, lock-free.
     */
    private boolean anyPHoldsWork(P[] allp, int procs, boolean withRunnext) {
        for (int i = 0; i < procs && i < allp.length; i++) {
            if (holdsWork(allp[i], withRunnext)) {
                return true;
            }
        }
        for (P p2 : sched.spares) {
            if (holdsWork(p2, withRunnext)) {
                return true;
            }
        }
        return false;
    }

    private static boolean holdsWork(P pp, boolean withRunnext) {
        return !pp.idle && !(withRunnext ? pp.runq.isEmpty() : pp.runq.ringLooksEmpty());
    }

    /**
     * Starts one more spinning M if there is an idle P and no M is spinning already.
     * Can be executed by any thread.
     * Go: runtime/proc.go wakep
     */
    void wakep() {
        // No idle P: every P is owned by an M that will look at the queues again before it lets
        // go of its P (under sched.lock for the global queue, and with the spinning M's
        // re-check of "The delicate dance"), so there is nobody to wake. This cheap load saves
        // the CAS, the lock and the decrement on the hot path of a fully busy runtime, such as
        // goready after every channel hand-off. (Go 1.19's wakep; later Go dropped it for
        // pidlegetSpinning's sake, paying the lock instead.)
        if (sched.npidle.get() == 0) {
            return;
        }
        if (sched.nmspinning.get() != 0 || !sched.nmspinning.compareAndSet(0, 1)) {
            return;
        }
        P pp;
        sched.lock.lock();
        try {
            pp = pidlegetSpinning();
            if (pp == null) {
                if (sched.nmspinning.decrementAndGet() < 0) {
                    throw new IllegalStateException("wakep: negative nmspinning");
                }
                return;
            }
        } finally {
            sched.lock.unlock();
        }
        sched.spinnerStarts.incrementAndGet();
        startm(pp, true);
    }

    /**
     * Runs pp on an idle or new M. pp == null means take an idle P (none: do nothing).
     * spinning: the caller already counted the new M in nmspinning.
     * Can be executed by any thread; sched.lock must not be held.
     * Go: runtime/proc.go startm
     */
    void startm(P pp, boolean spinning) {
        M nmp;
        M newm = null;
        sched.lock.lock();
        try {
            if (pp == null) {
                if (spinning) {
                    throw new IllegalStateException("startm: P required for spinning=true");
                }
                pp = pidleget();
                if (pp == null) {
                    return;
                }
            }
            if (sched.stopping) {
                pidleput(pp);
                if (spinning) {
                    sched.nmspinning.decrementAndGet();
                }
                return;
            }
            nmp = mget();
            if (nmp == null) {
                // Go's mReserveID: the id is taken under the lock, the thread is created and
                // started outside it (Thread.start takes far longer than any critical section).
                nmp = new M(sched, sched.mnext++);
                sched.mcount.incrementAndGet();
                sched.allm.add(nmp);
                nmp.spinning = spinning;
                nmp.nextp = pp;
                newm = nmp;
            }
        } finally {
            sched.lock.unlock();
        }
        if (newm != null) {
            newm.start();
            return;
        }
        nmp.spinning = spinning;
        nmp.nextp = pp;
        nmp.notewakeup();
    }

    /**
     * Parks mp on the idle list until startm hands it a P. Returns with mp.p set, or null when
     * the runtime is stopping.
     * Executed only by mp, holding no P.
     * Go: runtime/proc.go stopm
     */
    void stopm(M mp) {
        if (mp.p != null || mp.spinning) {
            throw new IllegalStateException("stopm holding p or spinning");
        }
        mp.traceClock = 0; // an M that sleeps is not between two runs
        sched.lock.lock();
        try {
            if (sched.stopping) {
                return;
            }
            mput(mp);
        } finally {
            sched.lock.unlock();
        }
        mp.notesleep();
        P pp = mp.nextp;
        if (pp != null) {
            mp.nextp = null;
            acquirep(mp, pp);
        }
    }

    /**
     * Hands off pp, released by an M that will not run Go code for a while (a syscall, a
     * stopped world): starts an M for it if there is work it would find, else idles it.
     * Can be executed by any thread; sched.lock must not be held.
     * Go: runtime/proc.go handoffp
     */
    void handoffp(P pp) {
        if (!pp.runq.isEmpty() || !sched.runq.isEmpty()) {
            startm(pp, false);
            return;
        }
        // No local work: make sure there is a spinning M, as a wakep would.
        if (sched.nmspinning.get() + sched.npidle.get() == 0 && sched.nmspinning.compareAndSet(0, 1)) {
            sched.needspinning = 0;
            startm(pp, true);
            return;
        }
        long when;
        sched.lock.lock();
        try {
            if (sched.gcwaiting) {
                if (pp.spare) {
                    sched.lending.retireLocked(pp);
                    return;
                }
                pp.setStatusUnchecked(P.GCSTOP);
                stopwaitDecrement();
                return;
            }
            if (!sched.runq.isEmpty()) {
                when = -1;
            } else if (sched.npidle.get() == sched.gomaxprocs + sched.spares.length - 1
                    && sched.lastpoll.get() != 0) {
                // The last running P, and nobody polls: someone must wait for the network and
                // the timers, so keep an M on it.
                when = -1;
            } else {
                when = pp.timers.wakeTime();
                pidleput(pp);
            }
        } finally {
            sched.lock.unlock();
        }
        if (when == -1) {
            startm(pp, false);
        } else if (when != 0) {
            wakeNetPoller(when);
        }
    }

    /** Go: runtime/proc.go acquirep, wirep. Executed only by mp. */
    void acquirep(M mp, P pp) {
        assert M.current() == mp : "acquirep: not executed by m" + mp.mid;
        if (pp.m != null) {
            throw new IllegalStateException("acquirep: " + pp + " already held by m" + pp.m.mid);
        }
        pp.m = mp;
        pp.setStatusUnchecked(P.RUNNING);
        mp.p = pp;
    }

    /** Go: runtime/proc.go releasep. Executed only by mp. */
    P releasep(M mp) {
        assert M.current() == mp : "releasep: not executed by m" + mp.mid;
        P pp = mp.p;
        pp.m = null;
        mp.p = null;
        pp.setStatusUnchecked(P.IDLE);
        return pp;
    }

    /** sched.lock must be held. Go: pidleput */
    private void pidleput(P pp) {
        assert lockHeld(sched.lock) : "pidleput: sched.lock not held";
        if (!pp.runq.isEmpty()) {
            throw new IllegalStateException("pidleput: P has non-empty run queue");
        }
        if (pp.spare && (pp.retiring || sched.gcwaiting)) {
            sched.lending.retireLocked(pp); // its hog yielded: the spare leaves instead of idling
            return;
        }
        pp.setStatusUnchecked(P.IDLE);
        pp.idle = true;
        pp.link = sched.pidle;
        sched.pidle = pp;
        sched.npidle.incrementAndGet();
    }

    /** sched.lock must be held. Go: pidleget */
    private P pidleget() {
        assert lockHeld(sched.lock) : "pidleget: sched.lock not held";
        P pp = sched.pidle;
        if (pp != null) {
            sched.pidle = pp.link;
            pp.link = null;
            pp.idle = false;
            sched.npidle.decrementAndGet();
        }
        return pp;
    }

    /** sched.lock must be held. Go: pidlegetSpinning */
    private P pidlegetSpinning() {
        assert lockHeld(sched.lock) : "pidlegetSpinning: sched.lock not held";
        P pp = pidleget();
        if (pp == null) {
            sched.needspinning = 1;
        }
        return pp;
    }

    /** sched.lock must be held. */
    private void mput(M mp) {
        assert lockHeld(sched.lock) : "mput: sched.lock not held";
        mp.schedlink = sched.midle;
        sched.midle = mp;
        sched.nmidle++;
    }

    /** sched.lock must be held. */
    private M mget() {
        assert lockHeld(sched.lock) : "mget: sched.lock not held";
        M mp = sched.midle;
        if (mp != null) {
            sched.midle = mp.schedlink;
            mp.schedlink = null;
            sched.nmidle--;
        }
        return mp;
    }

    /** Removes pp from the idle list. sched.lock must be held. */
    void unlinkIdle(P pp) {
        assert lockHeld(sched.lock) : "unlinkIdle: sched.lock not held";
        P prev = null;
        for (P q = sched.pidle; q != null; prev = q, q = q.link) {
            if (q == pp) {
                if (prev == null) {
                    sched.pidle = q.link;
                } else {
                    prev.link = q.link;
                }
                q.link = null;
                q.idle = false;
                sched.npidle.decrementAndGet();
                return;
            }
        }
    }

    // =============================================================================================
    // Syscalls
    // =============================================================================================

    /**
     * The current G enters blocking code: its M lets go of the P (status SYSCALL) so sysmon
     * can retake it for others, but keeps it as oldp to take back on exit.
     * Executed only by a goroutine.
     * Go: runtime/proc.go entersyscall, reentersyscall
     */
    static void entersyscall(G gp) {
        leaveHost(gp); // a syscall blocks its M: not with a partner's frames under it
        M mp = gp.m;
        P pp = mp.p;
        if (gp.sched.trace.on) {
            gp.sched.trace.record(pp, gp.goid, Trace.K_GO_SYSCALL, 0);
        }
        gp.casgstatus(G.RUNNING, G.SYSCALL);
        mp.syscalltick = pp.syscalltick();
        mp.oldp = pp;
        pp.m = null;
        mp.p = null;
        mp.sched.nmsyscall.incrementAndGet();
        pp.setStatusUnchecked(P.SYSCALL);
        if (mp.sched.gcwaiting && pp.spare && pp.tryCasStatus(P.SYSCALL, P.IDLE)) {
            // A spare is not stopped with the world: it is given back.
            mp.sched.lock.lock();
            try {
                mp.sched.lending.retireLocked(pp);
            } finally {
                mp.sched.lock.unlock();
            }
        } else if (mp.sched.gcwaiting && !pp.spare && pp.tryCasStatus(P.SYSCALL, P.GCSTOP)) {
            // A stop-the-world is waiting for this P: give it up now.
            mp.sched.lock.lock();
            try {
                mp.sched.scheduler.stopwaitDecrement();
            } finally {
                mp.sched.lock.unlock();
            }
        }
    }

    /**
     * The current G leaves blocking code: take the old P back if nobody retook it, else any
     * idle P, else yield to the global queue and let the M park (exitsyscall0).
     * Executed only by a goroutine.
     * Go: runtime/proc.go exitsyscall, exitsyscallfast
     */
    static void exitsyscall(G gp) {
        M mp = gp.m;
        Sched s = mp.sched;
        s.nmsyscall.decrementAndGet();
        P oldp = mp.oldp;
        mp.oldp = null;
        if (oldp != null && oldp.status() == P.SYSCALL && oldp.tryCasStatus(P.SYSCALL, P.IDLE)) {
            s.scheduler.acquirep(mp, oldp);
            oldp.incSyscalltick();
            gp.casgstatus(G.SYSCALL, G.RUNNING);
            if (s.trace.on) {
                s.trace.record(oldp, gp.goid, Trace.K_GO_SYSEXIT, 0);
            }
            return;
        }
        if (s.npidle.get() > 0 && !s.gcwaiting) {
            P pp;
            s.lock.lock();
            try {
                pp = s.scheduler.pidleget();
            } finally {
                s.lock.unlock();
            }
            if (pp != null) {
                s.scheduler.acquirep(mp, pp);
                pp.incSyscalltick();
                gp.casgstatus(G.SYSCALL, G.RUNNING);
                if (s.trace.on) {
                    s.trace.record(pp, gp.goid, Trace.K_GO_SYSEXIT, 1);
                }
                return;
            }
        }
        // Slow path: no P. Yield; the M queues us globally and parks (exitsyscall0).
        if (s.trace.on) {
            s.trace.record(null, gp.goid, Trace.K_GO_SYSEXIT, 1);
        }
        gp.op = G.OP_EXITSYSCALL;
        if (!yieldToScheduler(gp)) {
            throw new IllegalStateException("goroutine " + gp.goid + " cannot leave a syscall while pinned");
        }
    }

    /**
     * Runs a goroutine operation (one that may park or yield: a channel operation, select, a
     * semaphore, a sleep, a yield, a netpoll wait) that code inside a {@code Go.syscall} body
     * makes. A G in SYSCALL holds no P and cannot park or be queued, so, as Go does when C code
     * calls back into Go during a cgo call, it leaves the syscall first (exitsyscall: the old P,
     * an idle one, or the global queue until an M runs it), runs op as an ordinary goroutine,
     * and enters the syscall again before returning to the blocking code. Operations call this
     * at their start, before they take any runtime lock, because exitsyscall's slow path yields.
     * As Go's, the callback keeps gp on its M ("we must ensure that we stay on that M"): gp is
     * locked to it first, unless already locked, so a park inside op waits on this thread
     * (lockedSwitch) and the blocking code goes on, after op, on the thread it began on, its
     * ThreadLocals and thread-owned locks still its own.
     * Executed only by gp, in SYSCALL.
     * Go: runtime/proc.go cgocallbackg (lockOSThread, exitsyscall, the callback, reentersyscall, unlockOSThread)
     */
    static <T> T syscallCallback(G gp, java.util.function.Supplier<T> op) {
        assert gp.status() == G.SYSCALL;
        M mp = gp.m;
        boolean lockedHere = gp.lockedm == null;
        if (lockedHere) {
            mp.lockedg = gp;
            gp.lockedm = mp;
        }
        exitsyscall(gp);
        try {
            return op.get();
        } finally {
            entersyscall(gp);
            if (lockedHere && gp.lockedExt == 0) { // a Go.lockOSThread made inside op stays
                mp.lockedg = null;
                gp.lockedm = null;
            }
        }
    }

    /** Go: runtime/proc.go exitsyscall0. Executed only by mp (no P), after gp yielded. */
    private void exitsyscall0(M mp, G gp) {
        gp.m = null;
        gp.casgstatus(G.SYSCALL, G.RUNNABLE);
        P pp;
        sched.lock.lock();
        try {
            pp = sched.gcwaiting ? null : pidleget();
            if (pp == null) {
                sched.runq.put(gp);
            }
        } finally {
            sched.lock.unlock();
        }
        if (pp != null) {
            acquirep(mp, pp);
            // Run it right away on the P we found (the G was never queued).
            G next = gp;
            boolean inherit = false;
            while (next != null) {
                next = execute(mp, next, inherit);
                inherit = true;
            }
            return;
        }
        stopm(mp);
    }

    // =============================================================================================
    // LockOSThread
    // =============================================================================================

    /*
     * LockOSThread (Go: lockedm/lockedg, startlockedm, stoplockedm). A goroutine locked to its M
     * is never unmounted from that M's thread. Where another goroutine would yield its
     * continuation (a park, Gosched, a preemption, the slow exit from a syscall), a locked one
     * does in place, on its own thread and still inside its frames, what the M would have done
     * after the yield (lockedSwitch): commit the park (or queue itself globally as RUNNABLE),
     * hand the P off (handoffp), and sleep on the M's note. Whoever readies it queues it as any
     * G; the M that takes it off a run queue sees it is locked elsewhere and, in execute, hands
     * its own P to the locked M and stops (startlockedm). The locked M wakes with that P and the
     * goroutine returns from its park. So while locked, the M runs that goroutine only, other
     * goroutines run on other Ms, and the Ps keep working while it waits.
     *
     * JVM departure: Go's stoplockedm sleeps in the M's scheduler with the G's stack switched
     * out. Here the M sleeps inside the goroutine's frames, with its continuation still mounted:
     * the frames never leave the thread, nothing is frozen or thawed, and it works even where a
     * continuation cannot be unmounted at all (a native frame on the stack). A goroutine that ends locked ends its M
     * (Go: the thread exits), taking the thread's ThreadLocals with it; when the runtime stops
     * while a locked goroutine waits, its M unwinds the goroutine with LockedMStopped.
     */

    /** Thrown inside a locked goroutine that waits when the runtime stops: unwinds it quietly. */
    static final class LockedMStopped extends Error {
        LockedMStopped() {
            super("the runtime stopped while this goroutine, locked to its thread, was waiting", null, false, false);
        }
    }

    /** Yields gp's continuation to its M, or, for a goroutine locked to its M, switches in place. */
    static boolean yieldToScheduler(G gp) {
        if (gp.lockedm != null) {
            gp.sched.scheduler.lockedSwitch(gp);
            return true;
        }
        return Coroutine.yieldToScheduler();
    }

    /**
     * What execute does after a yield, for a locked gp, on its own M and inside its frames; then
     * stoplockedm. Returns when gp runs again, holding a P.
     * Executed only by gp (on its locked M).
     */
    private void lockedSwitch(G gp) {
        M mp = gp.lockedm;
        int op = gp.op;
        gp.op = G.OP_NONE;
        switch (op) {
            case G.OP_PARK -> {
                ParkCommit commit = gp.parkCommit;
                Object arg = gp.parkArg;
                gp.parkCommit = null;
                gp.parkArg = null;
                if (!gp.tryCasgstatus(G.RUNNING, G.WAITING)) {
                    gp.casgstatus(G.READIED, G.RUNNING); // woken before it parked: go on
                    return;
                }
                // gp.m stays mp: the commit's timers go to this M's P, which it still holds.
                if (commit != null && !commit.commit(gp, arg)) {
                    gp.casgstatus(G.WAITING, G.RUNNABLE);
                    gp.casgstatus(G.RUNNABLE, G.RUNNING);
                    return;
                }
                if (gp.bubble != null) {
                    gp.bubble.parked(gp);
                }
            }
            case G.OP_GOSCHED, G.OP_PREEMPT -> {
                gp.yieldedToRunnable();
                if (op == G.OP_PREEMPT && mp.p != null) {
                    mp.p.count(P.C_PREEMPTIONS);
                }
                globrunqputTakingLock(gp);
            }
            case G.OP_EXITSYSCALL -> {
                gp.casgstatus(G.SYSCALL, G.RUNNABLE);
                globrunqputTakingLock(gp);
                wakep();
            }
            default -> throw new IllegalStateException("goroutine " + gp.goid + " yielded without a reason");
        }
        stoplockedm(mp, gp);
    }

    /**
     * The locked M gives its P away while gp is not running, and sleeps until the M that takes
     * gp off a run queue hands it a P. Executed only by mp, inside gp's frames.
     * Go: runtime/proc.go stoplockedm
     */
    private void stoplockedm(M mp, G gp) {
        mp.setCurg(null);
        if (mp.p != null) {
            handoffp(releasep(mp));
        }
        P pp;
        for (;;) {
            mp.notesleep();
            pp = mp.nextp;
            if (pp != null) {
                mp.nextp = null;
                break;
            }
            if (sched.stopping) {
                // Unwind gp on its own thread; execute then ends it (exitWithLockedM) and this M.
                mp.setCurg(gp);
                gp.m = mp;
                while (!gp.tryCasgstatus(G.WAITING, G.RUNNING) && !gp.tryCasgstatus(G.RUNNABLE, G.RUNNING)) {
                    Thread.onSpinWait(); // a goroutine snapshot holds it in SCAN for a moment
                }
                throw new LockedMStopped();
            }
        }
        acquirep(mp, pp);
        mp.setCurg(gp);
        gp.m = mp;
        gp.casgstatus(G.RUNNABLE, G.RUNNING);
        gp.preempt = false;
        pp.incSchedtick();
        pp.count(P.C_SCHEDULES);
    }

    /**
     * mp took gp, locked to another M, off a run queue: give mp's P to gp's M and let mp stop
     * (the caller's loop finds it without a P). Executed only by mp.
     * Go: runtime/proc.go startlockedm
     */
    private void startlockedm(M mp, G gp, M lockedm) {
        P pp = releasep(mp);
        lockedm.nextp = pp;
        lockedm.notewakeup();
    }

    /**
     * gp ended while locked to mp: like Go, whose thread exits then, this M does not go back to
     * scheduling; its P is handed off and its thread ends. Executed only by mp.
     */
    private void exitWithLockedM(M mp, G gp) {
        gp.lockedm = null;
        gp.lockedExt = 0;
        mp.lockedg = null;
        goexit0(mp, gp);
        mp.exiting = true;
        sched.lock.lock();
        try {
            sched.allm.remove(mp);
        } finally {
            sched.lock.unlock();
        }
        if (mp.p != null) {
            handoffp(releasep(mp));
        }
    }

    // =============================================================================================
    // Stop-the-world and procresize
    // =============================================================================================

    /** sched.lock must be held. */
    void stopwaitDecrement() {
        assert lockHeld(sched.lock) : "stopwaitDecrement: sched.lock not held";
        sched.stopwait--;
        if (sched.stopwait == 0) {
            sched.stopnoteSet = true;
            Thread t = sched.stopperThread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** A running P stops for a stop-the-world. Executed only by mp. Go: gcstopm */
    private void gcstopm(M mp) {
        if (mp.spinning) {
            mp.spinning = false;
            sched.nmspinning.decrementAndGet();
        }
        P pp = releasep(mp);
        sched.lock.lock();
        try {
            pp.setStatusUnchecked(P.GCSTOP);
            stopwaitDecrement();
        } finally {
            sched.lock.unlock();
        }
        stopm(mp);
    }

    /**
     * Changes GOMAXPROCS with the world stopped: every P reaches a scheduling point (running
     * Gs are asked to yield at their next safe point), then Ps are created or destroyed and
     * their queues moved, then the world restarts. Must be called by a thread that holds no P
     * of this runtime (GoRuntime runs it inside a syscall when called from a goroutine).
     * Go: runtime/proc.go stopTheWorldWithSema, procresize, startTheWorldWithSema
     */
    void stopTheWorldAndResize(int nprocs) {
        List<P> runnablePs;
        sched.lock.lock();
        try {
            M self = M.current(); // not Thread.currentThread(): see M.current()
            sched.stopperThread = self != null ? self : Thread.currentThread();
            sched.stopnoteSet = false;
            int old = sched.gomaxprocs;
            sched.stopwait = old;
            sched.gcwaiting = true;
            preemptall();
            P[] allp = sched.allp;
            for (int i = 0; i < old; i++) {
                P pp = allp[i];
                if (pp.status() == P.SYSCALL && pp.tryCasStatus(P.SYSCALL, P.GCSTOP)) {
                    sched.stopwait--;
                }
            }
            // Spare Ps are not stopped but given back: idle ones now, held ones by their M at
            // its next scheduling round, which the stop waits for.
            for (P sp : sched.spares) {
                sp.retiring = true;
                if (sp.idle) {
                    unlinkIdle(sp);
                    sched.lending.retireLocked(sp);
                } else if (sp.status() == P.SYSCALL && sp.tryCasStatus(P.SYSCALL, P.IDLE)) {
                    sched.lending.retireLocked(sp);
                } else {
                    sp.spareInStopwait = true;
                    sched.stopwait++;
                }
            }
            for (P pp; (pp = pidleget()) != null; ) {
                pp.setStatusUnchecked(P.GCSTOP);
                sched.stopwait--;
            }
            // Ms parked in stopm may hold nothing; the running Ps stop in findRunnable.
        } finally {
            sched.lock.unlock();
        }
        // Real time, not the runtime's clock: this paces re-preempting real threads, and a
        // nanoClock that stands still must not leave a stop-the-world waiting forever.
        long nextPreempt = System.nanoTime() + 100_000;
        while (!sched.stopnoteSet) {
            sched.lock.lock();
            try {
                if (sched.stopwait == 0) {
                    break;
                }
            } finally {
                sched.lock.unlock();
            }
            LockSupport.parkNanos(this, 100_000);
            if (System.nanoTime() >= nextPreempt) {
                preemptall();
                nextPreempt = System.nanoTime() + 100_000;
            }
        }
        sched.lock.lock();
        try {
            runnablePs = procresize(nprocs);
            sched.gcwaiting = false;
            sched.stopperThread = null;
        } finally {
            sched.lock.unlock();
        }
        for (P pp : runnablePs) {
            startm(pp, false);
        }
        long when = sched.allp[0].timers.wakeTime();
        if (when != 0) {
            wakeNetPoller(when); // destroyed Ps' timers moved to P0
        }
        wakep();
    }

    /** Asks every running G to yield at its next safe point. Go: preemptall */
    void preemptall() {
        P[] allp = sched.allp;
        for (int i = 0; i < sched.gomaxprocs && i < allp.length; i++) {
            Sysmon.preemptone(allp[i]);
        }
        for (P sp : sched.spares) {
            Sysmon.preemptone(sp);
        }
    }

    /**
     * Creates or destroys Ps so that exactly nprocs are in use. Returns the Ps with local work,
     * which need an M. The world is stopped (every P in use is GCSTOP) and sched.lock is held.
     * Go: runtime/proc.go procresize
     */
    List<P> procresize(int nprocs) {
        int old = sched.gomaxprocs;
        P[] allp = sched.allp;
        if (nprocs > allp.length) {
            P[] grown = Arrays.copyOf(allp, nprocs);
            for (int i = allp.length; i < nprocs; i++) {
                grown[i] = new P(sched, i, sched.config.runqSize(), sched.config.seed() * 31 + i + 1, false);
            }
            allp = grown;
            sched.allp = grown;
        }
        for (int i = old; i < nprocs; i++) {
            allp[i].setStatusUnchecked(P.GCSTOP);
        }
        // Destroy Ps beyond nprocs: their Gs go to the head of the global queue in order.
        G[] drained = new G[sched.config.runqSize() + 1];
        for (int i = nprocs; i < old; i++) {
            P pp = allp[i];
            int n = pp.runq.drain(drained);
            // drained[0] may be runnext; it should run first, so push in reverse order.
            for (int k = n - 1; k >= 0; k--) {
                sched.runq.putHead(drained[k]);
                drained[k] = null;
            }
            sched.allgs.flush(pp.allgsBuffers); // the list alone holds its Refs from now on
            // Its timers go to P0, which always survives (Go moves them to the caller's P).
            pp.timers.moveAllTo(allp[0].timers);
            pp.setStatusUnchecked(P.DEAD); // its counters stay: stats() sums over every P ever created
        }
        sched.gomaxprocs = nprocs;
        sched.stealOrder = new RandomOrder(nprocs);
        List<P> runnable = new ArrayList<>();
        for (int i = nprocs - 1; i >= 0; i--) {
            P pp = allp[i];
            if (pp.status() != P.GCSTOP) {
                continue; // held by an M that never stopped (cannot happen with the world stopped)
            }
            if (pp.runq.isEmpty()) {
                pidleput(pp);
            } else {
                pp.setStatusUnchecked(P.IDLE);
                runnable.add(pp);
            }
        }
        return runnable;
    }

    /** First start: creates the Ps. Called once by GoRuntime before any M exists. */
    void init(int nprocs) {
        sched.lock.lock();
        try {
            procresize(nprocs);
        } finally {
            sched.lock.unlock();
        }
    }
}
