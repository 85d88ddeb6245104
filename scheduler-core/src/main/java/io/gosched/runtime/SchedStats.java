package io.gosched.runtime;

import java.util.List;

/**
 * A cheap, consistent-enough snapshot of the scheduler (no stop-the-world): each field is read
 * once, racily, from its owner. Counters are totals since start.
 *
 * @param preemptHandoffs    Ps handed off from a G that ignored a preemption request for a second quantum (subset of handoffs)
 * @param syscallHandoffs    Ps retaken from Ms in a syscall (subset of handoffs)
 * @param schedLatency       runnable-to-running latency of a 1-in-8 sample of transitions (Go's /sched/latencies:seconds)
 * @param procs              per-P detail, one entry per P in use
 * @param leakedGoroutines   goroutines found leaked since start (Go 1.26 goroutineleak; see
 *                           GoRuntime.leakedGoroutines); not counted in goroutines
 */
public record SchedStats(
        int gomaxprocs, int idleProcs, int threads, int spinningThreads, int idleThreads,
        int syscallThreads, int globalRunqueue, int[] localRunqueues, long goroutines,
        long spawned, long schedules, long steals, long stolenGoroutines,
        long preemptions, long handoffs, long timersFired, long netpollReady,
        long preemptHandoffs, long syscallHandoffs,
        long runnableGoroutines, long waitingGoroutines, long syscallGoroutines,
        LatencyHistogram schedLatency, List<ProcStats> procs, long uptimeNanos, long leakedGoroutines) {

    /** The stats without a leak count (0), for callers written before it existed. */
    public SchedStats(int gomaxprocs, int idleProcs, int threads, int spinningThreads, int idleThreads,
            int syscallThreads, int globalRunqueue, int[] localRunqueues, long goroutines,
            long spawned, long schedules, long steals, long stolenGoroutines,
            long preemptions, long handoffs, long timersFired, long netpollReady,
            long preemptHandoffs, long syscallHandoffs,
            long runnableGoroutines, long waitingGoroutines, long syscallGoroutines,
            LatencyHistogram schedLatency, List<ProcStats> procs, long uptimeNanos) {
        this(gomaxprocs, idleProcs, threads, spinningThreads, idleThreads, syscallThreads, globalRunqueue, localRunqueues,
                goroutines, spawned, schedules, steals, stolenGoroutines, preemptions, handoffs, timersFired, netpollReady,
                preemptHandoffs, syscallHandoffs, runnableGoroutines, waitingGoroutines, syscallGoroutines, schedLatency, procs,
                uptimeNanos, 0);
    }
}
