package io.gosched.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A Go runtime: GOMAXPROCS Ps, the Ms that run them, and the goroutines they schedule.
 *
 * <p>Start one with {@link #start()} or {@link #start(SchedulerConfig)}, submit goroutines with
 * {@link #go(Runnable)} from any thread or run a Go-style main with {@link #run(Callable)}, and
 * close it when done. Several runtimes may live in one JVM; each has its own threads.
 */
public final class GoRuntime implements AutoCloseable {

    private static final AtomicInteger RUNTIME_IDS = new AtomicInteger();

    private final Sched sched;
    private final Sysmon sysmon;

    private GoRuntime(SchedulerConfig config) {
        String name = config.name() + "-" + RUNTIME_IDS.incrementAndGet();
        this.sched = new Sched(config, name);
        sched.runtime = this;
        sched.scheduler.init(config.gomaxprocs());
        this.sysmon = config.sysmon() ? new Sysmon(sched) : null;
        if (sysmon != null) {
            sysmon.start();
        }
    }

    /** Starts a runtime with GOMAXPROCS = available processors. */
    public static GoRuntime start() {
        return start(SchedulerConfig.defaults());
    }

    /**
     * Starts a runtime with the given configuration.
     *
     * @throws IllegalStateException when the JVM lacks what goroutines need, naming the flag:
     *     access to {@code jdk.internal.vm} (see {@link #checkContinuationAccess}) or {@link
     *     SafeJvm#OPTIONS} (unless {@value SafeJvm#ALLOW_STALE_CURRENT_THREAD} is set)
     */
    public static GoRuntime start(SchedulerConfig config) {
        checkContinuationAccess();
        SafeJvm.check();
        java.util.Objects.requireNonNull(config, "config");
        warmUp();
        return new GoRuntime(config);
    }

    /*
     * Warm-up. Go's scheduler is compiled ahead of time; ours is interpreted until the JIT has
     * compiled it, and on a fresh JVM a goroutine hand-off (select, send, park, runnext,
     * continuation switch) costs 20-100 us instead of about 1 (measured with Go's
     * TestPingPongHog on a fresh JVM at load 7-17 on the 2-core box: the light pair's turns).
     * So the first goroutines of a process would see a scheduler 20-100 times slower than the
     * next ones, and everything Go's tests assert about fairness between goroutines that hand
     * off and goroutines that compute fails for the first hundreds of milliseconds. The first
     * start in a JVM therefore runs WARMUP round trips through those paths on a private
     * one-P runtime, so that the JIT has seen them before any user goroutine runs. Cost: one
     * to a few hundred ms of the first start, once per JVM (-Dgosched.warmup=0 turns it off).
     */
    private static final int WARMUP = Integer.getInteger("gosched.warmup", 3000);
    private static final java.util.concurrent.atomic.AtomicBoolean WARMED = new java.util.concurrent.atomic.AtomicBoolean();

    private static void warmUp() {
        if (WARMUP <= 0 || !WARMED.compareAndSet(false, true)) {
            return;
        }
        SchedulerConfig warm = SchedulerConfig.builder().gomaxprocs(1).name("gosched-warmup").build();
        try (GoRuntime rt = new GoRuntime(warm)) {
            rt.run(() -> {
                Chan<Boolean> ping = Chan.make();
                Chan<Boolean> done = Chan.make();
                Go.go(() -> {
                    while (Select.select(Select.recv(done), Select.recv(ping)).index() == 1) {
                        ping.send(true);
                    }
                });
                for (int i = 0; i < WARMUP; i++) {
                    ping.send(true);
                    Select.select(Select.recv(done), Select.recv(ping));
                    if ((i & 63) == 0) {
                        Go.yield();
                    }
                }
                done.close();
                return null;
            });
        } catch (Exception e) {
            throw new IllegalStateException("gosched: the warm-up run failed", e);
        }
    }

    /**
     * Fails with a message naming the JVM flag when jdk.internal.vm is not exported to us:
     * without it the first continuation would die with an IllegalAccessError.
     */
    static void checkContinuationAccess() {
        Module base = Object.class.getModule();
        if (!base.isExported("jdk.internal.vm", GoRuntime.class.getModule())) {
            throw new IllegalStateException(
                    "gosched needs jdk.internal.vm.Continuation: start the JVM with "
                            + "--add-exports java.base/jdk.internal.vm=ALL-UNNAMED "
                            + "(the gosched jars carry it as an Add-Exports manifest entry, which java -jar honours)");
        }
    }

    Sched sched() {
        return sched;
    }

    /** The configuration this runtime was started with. */
    public SchedulerConfig config() {
        return sched.config;
    }

    /**
     * Starts a goroutine running body. From a goroutine of this runtime it goes to runnext of
     * the current P (Go's newproc); from any other thread to the global queue.
     *
     * @throws java.util.concurrent.RejectedExecutionException once shutdown has begun
     */
    public void go(Runnable body) {
        sched.scheduler.newproc(body);
    }

    /**
     * Runs main as a goroutine and waits for it, like Go's main: returns its value or rethrows
     * its exception. Called from a goroutine of this runtime, it simply calls main.
     *
     * <p>Under {@link SchedulerConfig.PanicPolicy#CRASH} (the default) an uncaught exception in
     * any other goroutine ends the runtime, and run() throws a {@link GoroutinePanicException}
     * whose cause is that exception; so does every run() after it.
     *
     * <p>If main ends by {@link Go#goexit()}, run() does not return: as in Go, the other
     * goroutines go on, and once none is left run() throws an {@link IllegalStateException} with
     * Go's message, "no goroutines (main called runtime.Goexit) - deadlock!"; if some are left but
     * all asleep for ever (proven as below), a {@link DeadlockException}, as Go's checkdead says.
     *
     * <p>When main and every other goroutine are blocked for ever, run() throws a {@link
     * DeadlockException} with Go's message, "all goroutines are asleep - deadlock!", a blank line and
     * the goroutine dump. JVM departure: Go counts its threads (checkdead); here a platform thread
     * may still hold a channel a goroutine waits on, so "all parked" is no proof. The proof is the
     * garbage collector's: the goroutines are unreachable (see {@link #leakedGoroutines()}), the
     * runtime is idle, no timer, syscall or network wait is pending. While it waits on an idle
     * runtime, sysmon requests a few collections to find out (see docs/debugging.md, "Deadlocks").
     */
    public <T> T run(Callable<T> main) throws Exception {
        java.util.Objects.requireNonNull(main, "main");
        G gp = Scheduler.getg();
        if (gp != null && gp.sched == sched) {
            return main.call();
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        Checkdead.Main waiting = new Checkdead.Main(result);
        sched.runs.add(result);
        sched.checkdead.mains.add(waiting);
        try {
            throwIfPanicked(); // after the add: a panic racing this call fails result or is seen here
            go(() -> {
                waiting.ref = Scheduler.getg().ref; // weakly: main's collection is the deadlock proof
                try {
                    result.complete(main.call());
                } catch (Go.Goexit exit) {
                    result.completeExceptionally(exit);
                    throw exit; // the main goroutine ends as Goexit ends it
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                }
            });
            return result.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Go.Goexit) {
                return afterMainGoexit(waiting);
            }
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        } finally {
            sched.checkdead.mains.remove(waiting);
            sched.runs.remove(result);
        }
    }

    /**
     * The main goroutine called Goexit: the others go on, and run() reports Go's checkdead
     * verdict once nothing can go on. Go tells two cases apart: no goroutine left at all ("no
     * goroutines (main called runtime.Goexit) - deadlock!"), or some left but every one asleep for
     * ever ("all goroutines are asleep - deadlock!", here with the same proof as while main waits:
     * the collector's, see Checkdead). A goroutine the collector reclaimed since main's Goexit was
     * asleep for ever, so it makes the second case even when none is left by the time run() looks.
     */
    private <T> T afterMainGoexit(Checkdead.Main mainRun) {
        long leakedAtGoexit = leakedGoroutinesTotal();
        List<GoroutineInfo> leakedBefore = sched.allgs.leaked();
        CompletableFuture<Void> asleep = new CompletableFuture<>();
        Checkdead.Main proof = new Checkdead.Main(asleep);
        proof.ref = mainRun.ref; // main has run; Checkdead needs no more of it
        sched.checkdead.mains.add(proof);
        try {
            while (Stats.liveGoroutines(sched) > 0 && !sched.stopping && !asleep.isDone()) {
                LockSupport.parkNanos(1_000_000);
            }
        } finally {
            sched.checkdead.mains.remove(proof);
        }
        throwIfPanicked();
        if (asleep.isCompletedExceptionally()) {
            try {
                asleep.join();
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof DeadlockException d) {
                    throw d;
                }
            }
        }
        if (leakedGoroutinesTotal() > leakedAtGoexit) {
            List<GoroutineInfo> since = new ArrayList<>(sched.allgs.leaked());
            since.removeAll(leakedBefore);
            throw new DeadlockException(Checkdead.REASON, traceback(since));
        }
        throw new IllegalStateException("no goroutines (main called runtime.Goexit) - deadlock!");
    }

    private void throwIfPanicked() {
        GoroutinePanicException p = sched.panicked.getNow(null);
        if (p != null) {
            throw p;
        }
    }

    /** The number of Ps in use. */
    public int gomaxprocs() {
        return sched.gomaxprocs;
    }

    /**
     * Sets the number of Ps at run time, stopping the world at safe points to move queues
     * (Go's procresize). n <= 0 only queries. Returns the previous value.
     */
    public int gomaxprocs(int n) {
        if (n <= 0) {
            return sched.gomaxprocs;
        }
        if (n > SchedulerConfig.MAX_GOMAXPROCS) {
            throw new IllegalArgumentException("gomaxprocs must be at most " + SchedulerConfig.MAX_GOMAXPROCS + ": " + n);
        }
        // Go's stopTheWorldGC: semacquire(&worldsema) first. A goroutine parks here, so its P
        // stops for a resize in progress instead of waiting for it (a monitor would block the M
        // with its P RUNNING, and the other resize would wait for that P forever).
        sched.worldsema.acquire();
        try {
            int old = sched.gomaxprocs;
            if (n == old || sched.stopping) {
                return old;
            }
            G gp = Scheduler.getg();
            if (gp != null && gp.status() == G.RUNNING) {
                // The world-stopper must hold no P: a goroutine gives its P up as for a syscall
                // (one of another runtime too: its M blocks here). Inside a Go.syscall body it
                // holds none already.
                Scheduler.entersyscall(gp);
                try {
                    sched.scheduler.stopTheWorldAndResize(n);
                } finally {
                    Scheduler.exitsyscall(gp);
                }
            } else {
                sched.scheduler.stopTheWorldAndResize(n);
            }
            return old;
        } finally {
            sched.worldsema.release();
        }
    }

    /** True once {@link #shutdown} has begun. */
    public boolean isShutdown() {
        return sched.closing;
    }

    /** A snapshot of the scheduler's state and counters. Cheap: no stop-the-world. */
    public SchedStats stats() {
        return Stats.snapshot(sched);
    }

    /**
     * This runtime's event trace: {@code trace().start(n)} records its scheduler events,
     * {@code trace().flightRecorder(window)} keeps the last window of them. Another runtime in the
     * same JVM has its own, and neither sees the other's events (Go has one runtime per process, so
     * its runtime/trace is global).
     */
    public Trace trace() {
        return sched.trace;
    }

    // =============================================================================================
    // Goroutine snapshots, the traceback dump, leaks (Go: runtime.Stack(all), pprof goroutine
    // profile, Go 1.26 goroutineleak)
    // =============================================================================================

    /**
     * Every live goroutine, ordered by id: its state, wait reason and time, labels, own stack,
     * parent and creation frame (see {@link GoroutineInfo}). No stop-the-world: each goroutine is
     * looked at on its own, so the list is not one instant of the whole program (Go's
     * runtime.Stack(all) stops the world; a dump here never pauses the scheduler). A parked or
     * runnable goroutine is held for the few microseconds its frames are walked (a waker that
     * comes then waits that long); a goroutine mounted on a thread (running, in a syscall, wired
     * by lockOSThread) is reported with an empty stack. Leaked goroutines are not listed (see
     * {@link #leakedGoroutines()}). Cost: see docs/debugging.md (about 100k goroutines a second).
     */
    public List<GoroutineInfo> goroutines() {
        AllGs allgs = sched.allgs;
        allgs.poll();
        List<GoroutineInfo> out = new ArrayList<>(allgs.size());
        synchronized (allgs) { // one snapshot at a time: a second would find Gs in SCAN
            long now = sched.nanotime(); // the clock sysmon stamps waitSince with (coarseNanotime)
            for (G gp : allgs.snapshot()) {
                GoroutineInfo info = snapshot(gp, now);
                if (info != null) {
                    out.add(info);
                }
            }
        }
        out.sort(java.util.Comparator.comparingLong(GoroutineInfo::id));
        return out;
    }

    /** One G's snapshot, or null when it is not a live goroutine. allgs' monitor is held. */
    private static GoroutineInfo snapshot(G gp, long now) {
        for (;;) {
            GoroutineInfo info = trySnapshot(gp, now);
            if (info != RETRY) {
                return info;
            }
            Thread.onSpinWait(); // it changed status between our read and our CAS: look again
        }
    }

    /** Marks "status changed under us" in trySnapshot. */
    private static final GoroutineInfo RETRY = new GoroutineInfo(0, GoroutineInfo.State.RUNNING, "", null, null, null, 0, null); // compared by identity

    private static GoroutineInfo trySnapshot(G gp, long now) {
        int st = gp.status();
        switch (st) {
            case G.RUNNING, G.READIED -> {
                return info(gp, GoroutineInfo.State.RUNNING, null, 0, List.of());
            }
            case G.SYSCALL -> {
                return info(gp, GoroutineInfo.State.SYSCALL, null, 0, List.of());
            }
            case G.WAITING, G.RUNNABLE -> {
                if (!gp.tryBeginScan(st)) {
                    return RETRY;
                }
                try {
                    // Under SCAN the G cannot run, so its fields hold still. Re-read lockedm: a G
                    // locked to its thread parks mounted, and is walked on that thread instead.
                    List<StackTraceElement> stack = gp.lockedm == null ? Traceback.stackOf(gp) : Traceback.stackOfLocked(gp);
                    if (st == G.RUNNABLE) {
                        return info(gp, GoroutineInfo.State.RUNNABLE, null, 0, stack);
                    }
                    if (gp.waitSince == 0) {
                        gp.waitSince = now; // no sysmon clock: from the first snapshot on, as Go's GC stamps waitsince
                    }
                    return info(gp, GoroutineInfo.State.WAITING, gp.waitreason(), now - gp.waitSince, stack);
                } finally {
                    gp.endScan(st);
                }
            }
            default -> {
                return null; // idle (being created) or dead
            }
        }
    }

    private static GoroutineInfo info(G gp, GoroutineInfo.State state, WaitReason reason, long waitedNanos, List<StackTraceElement> stack) {
        AllGs.Ref r = gp.ref;
        return new GoroutineInfo(gp.goid, state, reason != null ? reason.toString() : "",
                Duration.ofNanos(Math.max(0, waitedNanos)), gp.labels(), stack, r.parentGoid, r.createdAt);
    }

    /**
     * {@link #goroutines()} as Go prints a traceback of all goroutines (runtime.Stack(all),
     * {@code /debug/pprof/goroutine?debug=2}): a {@code goroutine 7 [chan receive, 2 minutes]:}
     * header (labels in it, as Go 1.26's tracebacklabels), the frames without the runtime's own,
     * and {@code created by ... in goroutine 1}; goroutines separated by a blank line.
     */
    public String dumpGoroutines() {
        return Traceback.dump(goroutines());
    }

    /** Go's traceback text of these goroutines (a filtered {@link #goroutines()}), as {@link #dumpGoroutines()} writes it. */
    public static String traceback(List<GoroutineInfo> goroutines) {
        return Traceback.dump(goroutines);
    }

    /**
     * The goroutines found leaked so far, oldest first: each was blocked on a channel, select or
     * io.gosched.sync object that no live goroutine or thread could reach any more, so the garbage
     * collector reclaimed it (Go 1.26's goroutineleak). A report has the id, wait reason, labels,
     * parent and creation frame; its stack is empty (it is gone). Found only after a collection:
     * a leak shows up at the first GC that reaches it. The newest 10,000 are kept; {@link
     * #leakedGoroutinesTotal()} counts all. A leaked goroutine is no longer counted as live.
     */
    public List<GoroutineInfo> leakedGoroutines() {
        return sched.allgs.leaked();
    }

    /** How many goroutines were found leaked since start (gosched_goroutines_leaked_total). */
    public long leakedGoroutinesTotal() {
        sched.allgs.poll();
        return sched.allgs.leakedTotal.get();
    }

    /** Go's GODEBUG=schedtrace line, and with detail one line per P and per M (scheddetail). */
    public String schedtrace(boolean detail) {
        return Stats.schedtrace(sched, detail);
    }

    /**
     * Stops accepting goroutines from outside, waits up to timeout for every goroutine to end,
     * then stops the Ms and sysmon. Returns true if every goroutine ended and every thread
     * stopped in time. Goroutines still parked when the time is up are abandoned.
     *
     * <p>Called from a goroutine of this runtime, it waits for every other goroutine (parking
     * the caller meanwhile, so its P runs them) and every other M; the caller itself keeps
     * running until it returns, and its M stops once it ends.
     */
    public boolean shutdown(Duration timeout) {
        // Real time (see Sched.nanotime): the timeout bounds how long real threads are waited for.
        long deadline = System.nanoTime() + timeout.toNanos();
        sched.closing = true;
        G gp = Scheduler.getg();
        boolean inside = gp != null && gp.sched == sched;
        long caller = inside ? 1 : 0; // the caller is live until it returns
        // After a panic nothing runs again: there is nothing to wait for.
        while (Stats.liveGoroutines(sched) > caller && !sched.panicked.isDone() && System.nanoTime() < deadline) {
            if (inside) {
                Go.sleep(Duration.ofNanos(500_000)); // park: the others need this P
            } else {
                LockSupport.parkNanos(500_000);
            }
        }
        boolean clean = Stats.liveGoroutines(sched) <= caller;
        List<M> ms = halt();
        M self = M.current();
        boolean stopped = true;
        for (M mp : ms) {
            if (mp == self) {
                continue;
            }
            long left = deadline - System.nanoTime();
            try {
                mp.join(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            stopped &= !mp.isAlive();
        }
        if (sysmon != null) {
            stopped &= sysmon.awaitStopped(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        }
        if (stopped && (clean || sched.panicked.isDone())) {
            sched.netpoll.close();
        }
        return clean && stopped;
    }

    /**
     * Stops the runtime without waiting: refuses new goroutines, tells every M to exit at its next
     * trip through the scheduler (so no goroutine is started or resumed again) and sysmon to stop.
     * Safe from any thread, a goroutine of this runtime included. Returns every M ever started.
     */
    List<M> halt() {
        sched.closing = true;
        List<M> ms;
        sched.lock.lock();
        try {
            sched.stopping = true;
            ms = new ArrayList<>(sched.allm);
        } finally {
            sched.lock.unlock();
        }
        if (sysmon != null) {
            sysmon.stop();
        }
        // Running goroutines yield at their next safe point, and their Ms then see stopping. One
        // that never reaches a safe point (a loop without Go.checkpoint) keeps its M, as a
        // goroutine does in Go without async preemption.
        sched.scheduler.preemptall();
        sched.netpoll.netpollBreak(); // the M blocked in netpoll re-checks and sees stopping
        for (M mp : ms) {
            mp.notewakeup();
        }
        return ms;
    }

    /**
     * After {@link #halt}: waits, at most {@code bound}, until no other M is running a goroutine
     * on a P, asking again for preemption meanwhile (a request can race the goroutine's own
     * yield, and be lost). So when a panic's run() throws, the goroutines that were running have
     * stopped at their safe points, and the dump sees them parked. A goroutine in a syscall, or
     * in a loop without a safe point, cannot be stopped; the wait gives up on it.
     * Go: runtime/proc.go freezetheworld (which gives up after about 7 ms; on a loaded machine an
     * M can be off its CPU far longer than that before it reaches its safe point).
     */
    boolean freezeTheWorld(List<M> ms, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos(); // real time, as shutdown's
        M self = M.current();
        for (;;) {
            boolean frozen = true;
            for (M mp : ms) {
                if (mp != self && mp.isAlive() && mp.curg() != null && mp.p != null) {
                    frozen = false;
                    break;
                }
            }
            if (frozen) {
                return true;
            }
            if (System.nanoTime() >= deadline) {
                return false;
            }
            sched.scheduler.preemptall();
            LockSupport.parkNanos(200_000);
        }
    }

    /** {@link #shutdown} with the configured default timeout. */
    @Override
    public void close() {
        shutdown(sched.config.shutdownTimeout());
    }

    @Override
    public String toString() {
        return "GoRuntime[" + sched.threadGroup.getName() + ", gomaxprocs=" + sched.gomaxprocs + "]";
    }
}
