package io.gosched.runtime;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Go's "all goroutines are asleep - deadlock!" for {@link GoRuntime#run}, proven by the garbage
 * collector.
 *
 * <p>Go's checkdead counts Ms: when no M runs Go code and no timer is pending, nothing can ever
 * wake a goroutine, since only goroutines (and the runtime) touch Go objects. On the JVM a
 * platform thread may hold a channel and send on it later, so "every goroutine is parked" proves
 * nothing. What does is reachability: the runtime holds a parked G only through what it waits on
 * (see {@link AllGs}), so a parked G that the collector reclaimed can never be woken by anyone.
 *
 * <p>The rule. A run() fails with {@link DeadlockException} ({@link #REASON}, a blank line, the
 * goroutine dump) only when, at one instant after a collection: every P is idle with empty run
 * queues and no timer, no spare P is lent, no M is in a syscall, no goroutine waits on the network,
 * nothing was scheduled since the dump was taken, and every goroutine of the runtime is either
 * collected (unreachable: asleep for ever) or parked in a wait nothing can end (a nil-channel wait,
 * {@code select {}}, which a goroutine wired by lockOSThread keeps reachable through its thread).
 * The dump is taken just before the collection, while the runtime is idle: the collected goroutines'
 * stacks are gone after it, and nothing ran in between (the schedule counters say so), so it shows
 * the deadlock.
 *
 * <p>Cost. A deadlocked JVM allocates nothing, so no collection would ever come by itself: while a
 * run() waits and the whole runtime has been idle (as above) across sysmon ticks, sysmon dumps the
 * goroutines and calls {@link System#gc()}. The n-th such collection since the run() began waiting
 * comes only once the runtime has been idle for 100 ms times 2^n in one stretch (at most
 * 2^{@value #MAX_SHIFT} times, 51.2 s): the back-off is not reset by activity, so a program whose main
 * waits in run() while platform threads feed it in bursts pays a handful of explicit collections
 * in all, not one per quiet moment, and a long-idle one at most one per 51.2 s of idleness, while a
 * deadlock that comes late is still found within that (a busy runtime pays nothing; nothing is
 * added to park or ready). Turn it off with
 * {@code -Dgosched.checkdead=false}; with {@code -XX:+DisableExplicitGC} it finds a deadlock only
 * when some other allocation brings a collection. Without sysmon ({@code SchedulerConfig.sysmon})
 * there is no check.
 *
 * Go: runtime/proc.go checkdead
 */
final class Checkdead {

    /** Go's fatal error text. */
    static final String REASON = "all goroutines are asleep - deadlock!";
    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("gosched.checkdead", "true"));
    /** The first collection comes this long into an idle stretch; each next one needs twice as long. */
    static final long FIRST_GC_DELAY_NANOS = 100_000_000;
    /** The idle time a collection needs stops doubling here: 100 ms << 9 = 51.2 s. */
    static final int MAX_SHIFT = 9;

    /** One waiting run(): its result, and main's G, weakly (set once main runs). */
    static final class Main {
        final CompletableFuture<?> result;
        /** main's AllGs.Ref: a weak reference, so waiting for main keeps nothing of it alive. */
        volatile AllGs.Ref ref;

        Main(CompletableFuture<?> result) {
            this.result = result;
        }
    }

    private final Sched sched;
    /** The run() calls waiting from outside. */
    final Set<Main> mains = ConcurrentHashMap.newKeySet();

    // Executed only by sysmon.
    private long idleEpoch = -1;
    private long nextGcAt;
    private int gcs;
    /** Every explicit collection requested; read by tests. */
    private volatile int requested;

    Checkdead(Sched sched) {
        this.sched = sched;
    }

    /** Explicit collections requested since this runtime started (tests). */
    int collectionsRequested() {
        return requested;
    }

    /** One sysmon tick. Reads a few counters per P while a run() waits; nothing otherwise. */
    void tick(long now) {
        if (!ENABLED || mains.isEmpty()) {
            idleEpoch = -1;
            gcs = 0;
            return;
        }
        long e = epochIfIdle();
        if (e < 0 || e != idleEpoch) {
            // Busy, or something ran since the last tick: a new idle stretch starts (or none). The
            // back-off goes on from where it was (see "Cost").
            idleEpoch = e;
            nextGcAt = now + (FIRST_GC_DELAY_NANOS << Math.min(gcs, MAX_SHIFT));
            return;
        }
        if (now - nextGcAt < 0 || !anyMainStarted()) {
            return;
        }
        gcs++;
        nextGcAt = now + (FIRST_GC_DELAY_NANOS << Math.min(gcs, MAX_SHIFT));
        String dump;
        try {
            dump = sched.runtime.dumpGoroutines(); // before the collection: their stacks go with it
        } catch (RuntimeException dumpFailed) {
            dump = "(goroutine dump failed: " + dumpFailed + ")";
        }
        requested++; // sysmon is the only writer
        System.gc();
        if (epochIfIdle() != e || !allAsleep()) {
            return;
        }
        DeadlockException dead = new DeadlockException(REASON, dump);
        for (Main m : mains) {
            if (m.ref != null) {
                m.result.completeExceptionally(dead);
            }
        }
    }

    private boolean anyMainStarted() {
        for (Main m : mains) {
            if (m.ref != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The sum of the schedule, timer and spawn counters if the runtime has nothing to do (every P
     * idle with empty queues and no timers, no spare lent, no syscall, no network waiter, no stop
     * in progress), else -1. Racy reads: the caller compares two of them around its verdict.
     */
    private long epochIfIdle() {
        if (sched.stopping || sched.gcwaiting || sched.spares.length != 0 || sched.nmsyscall.get() != 0
                || sched.netpoll.waiters.get() != 0 || !sched.runq.isEmpty()) {
            return -1;
        }
        long e = sched.spawnedOutside.get();
        P[] allp = sched.allp;
        int procs = Math.min(sched.gomaxprocs, allp.length);
        for (int i = 0; i < procs; i++) {
            P pp = allp[i];
            if (pp.status() != P.IDLE || !pp.runq.isEmpty() || pp.timers.size() != 0) {
                return -1;
            }
        }
        for (P pp : sched.allspares) {
            e += pp.counter(P.C_SCHEDULES) + pp.counter(P.C_TIMERS_FIRED) + pp.counter(P.C_SPAWNED);
        }
        for (P pp : allp) {
            e += pp.counter(P.C_SCHEDULES) + pp.counter(P.C_TIMERS_FIRED) + pp.counter(P.C_SPAWNED);
        }
        return e & Long.MAX_VALUE;
    }

    /**
     * Whether every G still alive is dead or parked for ever (after a collection, the rest of the
     * parked ones are gone). Its own method: the strong references of the snapshot end with it.
     */
    private boolean allAsleep() {
        for (G gp : sched.allgs.snapshot()) {
            int st = gp.status();
            if (st == G.DEAD) {
                continue;
            }
            if (st == G.WAITING && waitsForever(gp.waitreason())) {
                continue;
            }
            return false;
        }
        return true;
    }

    /** Waits that nothing can end, whoever holds what. */
    private static boolean waitsForever(WaitReason r) {
        return r == WaitReason.SELECT_NO_CASES || r == WaitReason.CHAN_RECEIVE_NIL_CHAN || r == WaitReason.CHAN_SEND_NIL_CHAN;
    }
}
