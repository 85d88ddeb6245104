package io.gosched.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds {@link SchedStats} snapshots and {@code schedtrace} text from the per-P counters
 * without stopping anything.
 *
 * Go: runtime/proc.go schedtrace
 */
final class Stats {

    private Stats() {
    }

    /**
     * Live goroutines. Exits are summed before spawns, with acquire loads, so every exit seen
     * has its spawn seen too and the result never undercounts a goroutine that is alive.
     */
    static long liveGoroutines(Sched sched) {
        P[] allp = everyP(sched);
        sched.allgs.poll();
        long exited = sched.allgs.leakedTotal.get(); // leaked goroutines are gone too (Go 1.26 does not count them)
        for (P pp : allp) {
            exited += pp.counter(P.C_EXITED);
        }
        sched.lock.lock();
        try {
            exited += sched.exitedWithoutP;
        } finally {
            sched.lock.unlock();
        }
        long spawned = sched.spawnedOutside.get();
        for (P pp : allp) {
            spawned += pp.counter(P.C_SPAWNED);
        }
        return Math.max(0, spawned - exited);
    }

    /** allp followed by every spare P ever created: counters are summed over all of them. */
    private static P[] everyP(Sched sched) {
        P[] allp = sched.allp;
        P[] spares = sched.allspares;
        if (spares.length == 0) {
            return allp;
        }
        P[] all = java.util.Arrays.copyOf(allp, allp.length + spares.length);
        System.arraycopy(spares, 0, all, allp.length, spares.length);
        return all;
    }

    static SchedStats snapshot(Sched sched) {
        long goroutines = liveGoroutines(sched);
        P[] allp = sched.allp;
        int procs = Math.min(sched.gomaxprocs, allp.length);
        long spawned = sched.spawnedOutside.get();
        long schedules = 0, steals = 0, stolen = 0, preemptions = 0, timers = 0;
        long netpoll = sched.netpollReadyNoP.get();
        int nb = LatencyBuckets.BOUNDS_NANOS.length + 1;
        long[] counts = new long[nb];
        long latCount = 0;
        long latSum = 0;
        for (P pp : everyP(sched)) {
            spawned += pp.counter(P.C_SPAWNED);
            schedules += pp.counter(P.C_SCHEDULES);
            steals += pp.counter(P.C_STEALS);
            stolen += pp.counter(P.C_STOLEN);
            preemptions += pp.counter(P.C_PREEMPTIONS);
            timers += pp.counter(P.C_TIMERS_FIRED);
            netpoll += pp.counter(P.C_NETPOLL_READY);
            for (int b = 0; b < nb; b++) {
                long c = pp.latencyCount(b);
                counts[b] += c;
                latCount += c;
            }
            latSum += pp.latencySumNanos();
        }
        double[] bounds = new double[nb];
        for (int b = 0; b < nb - 1; b++) {
            bounds[b] = LatencyBuckets.BOUNDS_NANOS[b] / 1e9;
        }
        bounds[nb - 1] = Double.POSITIVE_INFINITY;

        int[] local = new int[procs];
        List<ProcStats> detail = new ArrayList<>(procs);
        int running = 0;
        long localTotal = 0;
        for (int i = 0; i < procs; i++) {
            P pp = allp[i];
            local[i] = pp.runq.size();
            localTotal += local[i];
            M mp = pp.m;
            G cur = mp != null ? mp.curg() : null;
            if (cur != null) {
                running++;
            }
            G next = pp.runq.peekNext();
            detail.add(new ProcStats(pp.id, ProcStats.Status.ofCode(pp.status()), pp.schedtick(), pp.syscalltick(),
                    local[i], next != null ? next.goid : -1, cur != null ? cur.goid : -1,
                    mp != null ? mp.mid : -1, pp.timers.size()));
        }
        int global = sched.runq.size();
        int syscalls = sched.nmsyscall.get();
        long runnable = global + localTotal;
        long waiting = Math.max(0, goroutines - runnable - running - syscalls);
        int threads = sched.mcount.get();
        int idleThreads;
        sched.lock.lock();
        try {
            idleThreads = sched.nmidle;
        } finally {
            sched.lock.unlock();
        }
        long syscallHandoffs = sched.syscallHandoffs.get();
        long preemptHandoffs = sched.preemptHandoffs.get();
        // Idle spare Ps (see Sysmon) are not counted: idleProcs stays a share of GOMAXPROCS.
        return new SchedStats(procs, Math.min(sched.npidle.get(), procs), threads, sched.nmspinning.get(), idleThreads,
                syscalls, global, local, goroutines, spawned, schedules, steals, stolen, preemptions,
                syscallHandoffs + preemptHandoffs, timers, netpoll, new SchedStats.Handoffs(preemptHandoffs, syscallHandoffs),
                new SchedStats.GoroutineStates(runnable, waiting, syscalls), new LatencyHistogram(bounds, counts, latCount, latSum / 1e9),
                List.copyOf(detail), System.nanoTime() - sched.startNanos, sched.allgs.leakedTotal.get());
    }

    static String schedtrace(Sched sched, boolean detail) {
        SchedStats s = snapshot(sched);
        StringBuilder b = new StringBuilder();
        b.append("SCHED ").append(s.uptimeNanos() / 1_000_000).append("ms: gomaxprocs=").append(s.gomaxprocs())
                .append(" idleprocs=").append(s.idleProcs()).append(" threads=").append(s.threads())
                .append(" spinningthreads=").append(s.spinningThreads())
                .append(" needspinning=").append(sched.needspinning)
                .append(" idlethreads=").append(s.idleThreads())
                .append(" runqueue=").append(s.globalRunqueue());
        if (!detail) {
            b.append(" [");
            int[] l = s.localRunqueues();
            for (int i = 0; i < l.length; i++) {
                b.append(i == 0 ? "" : " ").append(l[i]);
            }
            return b.append("]\n").toString();
        }
        b.append(" gcwaiting=").append(sched.gcwaiting ? 1 : 0).append(" nmidle=").append(s.idleThreads())
                .append(" stopwait=").append(sched.stopwait).append('\n');
        for (ProcStats p : s.procs()) {
            b.append("  P").append(p.id()).append(": status=").append(p.status())
                    .append(" schedtick=").append(p.schedtick()).append(" syscalltick=").append(p.syscalltick())
                    .append(" m=").append(p.mId()).append(" runqsize=").append(p.runqueue())
                    .append(" runnext=").append(p.runnextGoid()).append(" curg=").append(p.currentGoid())
                    .append(" timerslen=").append(p.timers()).append('\n');
        }
        List<M> ms;
        sched.lock.lock();
        try {
            ms = new ArrayList<>(sched.allm);
        } finally {
            sched.lock.unlock();
        }
        for (M mp : ms) {
            P pp = mp.p;
            G g = mp.curg();
            b.append("  M").append(mp.mid).append(": p=").append(pp != null ? pp.id : -1)
                    .append(" curg=").append(g != null ? g.goid : -1)
                    .append(" spinning=").append(mp.spinning)
                    .append(" blocked=").append(pp == null && g == null)
                    .append(" alive=").append(mp.isAlive()).append('\n');
        }
        return b.toString();
    }
}
