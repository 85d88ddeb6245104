package io.gosched.runtime;

import java.util.Arrays;

/**
 * Spare Ps for hogs: when a goroutine ignores a preempt request for a whole quantum (it runs code
 * with no safe point for that long), sysmon lends its P's queue a spare P and an M to run it, and
 * takes the spare back once the hog reaches a safe point. The policy (when sysmon lends and takes
 * back) is in {@link Sysmon} under "Hogs"; this is the mechanism, kept apart from the scheduler
 * loop as Go keeps preemption in preempt.go.
 *
 * <p>JVM departure: Go preempts such a goroutine asynchronously with a signal; a JDK continuation
 * can only yield at a safe point of its own, so a hog keeps its P and the spare makes sure that
 * nothing waits behind it.
 *
 * <p>Invariants: a P lends at most one spare at a time ({@code P.lentSpare}); the live spares are
 * {@code Sched.spares} (visited after allp by stealing and timers), the retired ones wait in
 * {@code Sched.sparePool}; every change of either is made under sched.lock.
 */
final class SpareLending {

    private final Sched sched;
    private final Scheduler scheduler;

    SpareLending(Sched sched, Scheduler scheduler) {
        this.sched = sched;
        this.scheduler = scheduler;
    }


    /**
     * Lends a spare P for hogged, whose goroutine ignored a preempt request for a whole quantum,
     * and starts an M on it: that M steals hogged's queued Gs (runnext included) and runs its
     * timers, so nothing waits behind the hog. hogged itself is not touched: its M keeps it.
     * Returns false if a spare is already lent or the world is stopping.
     * Executed only by sysmon; sched.lock must not be held.
     */
    boolean lend(P hogged) {
        P sp;
        sched.lock.lock();
        try {
            if (sched.gcwaiting || sched.stopping || hogged.lentSpare != null || hogged.status() != P.RUNNING) {
                return false;
            }
            sp = sched.sparePool.poll();
            if (sp == null) {
                P[] all = sched.allspares;
                sp = new P(sched, SchedulerConfig.MAX_GOMAXPROCS + all.length, sched.config.runqSize(),
                        sched.config.seed() * 31 + 7919 + all.length, true);
                P[] grown = Arrays.copyOf(all, all.length + 1);
                grown[all.length] = sp;
                sched.allspares = grown;
            }
            sp.lender = hogged;
            sp.retiring = false;
            sp.spareInStopwait = false;
            sp.setStatusUnchecked(P.IDLE);
            hogged.lentSpare = sp;
            P[] cur = sched.spares;
            P[] next = Arrays.copyOf(cur, cur.length + 1);
            next[cur.length] = sp;
            sched.spares = next;
        } finally {
            sched.lock.unlock();
        }
        sched.preemptHandoffs.incrementAndGet();
        if (sched.trace.on) {
            sched.trace.recordShared(hogged.id, -1, Trace.K_PROC_HANDOFF, 1);
        }
        scheduler.startm(sp, false);
        return true;
    }

    /**
     * hogged's goroutine reached a safe point: take its spare back. An idle spare (or one whose
     * M is in a syscall) leaves at once; one held by an M is marked, its goroutine asked to
     * yield, and the M returns it at its next scheduling round.
     * Executed only by sysmon; sched.lock must not be held.
     */
    void giveBack(P hogged) {
        int moved = 0;
        sched.lock.lock();
        try {
            P sp = hogged.lentSpare;
            if (sp == null) {
                return;
            }
            sp.retiring = true;
            if (sp.idle) {
                scheduler.unlinkIdle(sp);
                moved = retireLocked(sp);
            } else if (sp.status() == P.SYSCALL && sp.tryCasStatus(P.SYSCALL, P.IDLE)) {
                moved = retireLocked(sp);
            } else {
                Sysmon.preemptone(sp);
            }
        } finally {
            sched.lock.unlock();
        }
        if (moved > 0) {
            scheduler.wakep();
        }
    }

    /** The M holding a retiring spare gives it back. Executed only by mp. */
    void retire(M mp) {
        boolean wasSpinning = mp.spinning;
        if (wasSpinning) {
            mp.spinning = false;
            sched.nmspinning.decrementAndGet();
        }
        P sp = scheduler.releasep(mp);
        int moved;
        sched.lock.lock();
        try {
            moved = retireLocked(sp);
        } finally {
            sched.lock.unlock();
        }
        // A submitter that saw this M spinning relied on it to find its work (see "Spinning
        // and wakep"); it is about to park instead, so hand the duty on, as resetspinning does.
        if (moved > 0 || wasSpinning) {
            scheduler.wakep();
        }
    }

    /**
     * Takes a spare P out of circulation: its queued Gs go to the global queue, its timers to
     * its lender's heap, and it goes back to the pool. Nobody may be running on it. Returns the
     * number of Gs moved (the caller calls wakep after unlocking).
     * sched.lock must be held.
     */
    int retireLocked(P sp) {
        assert Scheduler.lockHeld(sched.lock) : "SpareLending.retireLocked: sched.lock not held";
        P[] cur = sched.spares;
        int at = -1;
        for (int i = 0; i < cur.length; i++) {
            if (cur[i] == sp) {
                at = i;
            }
        }
        if (at < 0) {
            return 0; // already retired
        }
        P[] next = new P[cur.length - 1];
        System.arraycopy(cur, 0, next, 0, at);
        System.arraycopy(cur, at + 1, next, at, cur.length - at - 1);
        G[] drained = new G[sp.runq.capacity() + 1];
        int n = sp.runq.drain(drained);
        for (int k = 0; k < n; k++) {
            sched.runq.put(drained[k]);
        }
        P lender = sp.lender;
        if (sp.timers.size() > 0) {
            sp.timers.moveAllTo(lender != null ? lender.timers : sched.allp[0].timers);
            // Whoever polls re-evaluates its deadline over the heaps (lock-free: no sched.lock needed).
            sched.netpoll.netpollBreak();
        }
        sched.spares = next;
        if (lender != null && lender.lentSpare == sp) {
            lender.lentSpare = null;
        }
        sp.lender = null;
        sp.retiring = false;
        sp.setStatusUnchecked(P.DEAD);
        if (sp.spareInStopwait) {
            sp.spareInStopwait = false;
            scheduler.stopwaitDecrement();
        }
        sched.sparePool.push(sp);
        return n;
    }
}
