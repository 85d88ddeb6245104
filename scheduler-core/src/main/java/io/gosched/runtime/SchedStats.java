package io.gosched.runtime;

import java.util.List;

/**
 * A cheap, consistent-enough snapshot of the scheduler (no stop-the-world): each field is read
 * once, racily, from its owner. Counters are totals since start.
 *
 * <p>The first seventeen components are the public contract's, flat and in its order; what
 * follows is grouped by concern: hand-offs by cause, goroutines by state, the latency histogram,
 * per-P detail, then the scalars.
 *
 * @param handoffsByCause    {@code handoffs} split by why the P was handed off
 * @param goroutinesByState  the live goroutines that are not running, by state
 * @param schedLatency       runnable-to-running latency of a 1-in-8 sample of transitions (hand-offs 1 in 32, each counted 4 times) (Go's /sched/latencies:seconds)
 * @param procs              per-P detail, one entry per P in use
 * @param uptimeNanos        time since the runtime started
 * @param leakedGoroutines   goroutines found leaked since start (Go 1.26 goroutineleak; see
 *                           GoRuntime.leakedGoroutines); not counted in goroutines
 */
public record SchedStats(
        int gomaxprocs, int idleProcs, int threads, int spinningThreads, int idleThreads,
        int syscallThreads, int globalRunqueue, int[] localRunqueues, long goroutines,
        long spawned, long schedules, long steals, long stolenGoroutines,
        long preemptions, long handoffs, long timersFired, long netpollReady,
        Handoffs handoffsByCause, GoroutineStates goroutinesByState,
        LatencyHistogram schedLatency, List<ProcStats> procs, long uptimeNanos, long leakedGoroutines) {

    /** @throws NullPointerException if a group is null */
    public SchedStats {
        java.util.Objects.requireNonNull(handoffsByCause, "handoffsByCause");
        java.util.Objects.requireNonNull(goroutinesByState, "goroutinesByState");
    }

    /**
     * Ps handed to another M since start, by cause. The runtime's snapshot counts {@code handoffs}
     * as their sum.
     *
     * @param preempt Ps handed off from a G that ignored a preemption request for a second quantum
     *                (sysmon lent a spare P to run the rest of its queue)
     * @param syscall Ps retaken by sysmon from Ms in a syscall
     */
    public record Handoffs(long preempt, long syscall) {
        /** Hand-offs of either cause. */
        public long total() {
            return preempt + syscall;
        }
    }

    /**
     * The goroutines that are not running, by state (Go's /sched/goroutines/...:goroutines);
     * running ones are those on a P ({@link ProcStats#currentGoid()}).
     *
     * @param runnable in a run queue or runnext: {@code globalRunqueue} plus the local queues
     * @param waiting  parked (channel, timer, sync, netpoll)
     * @param syscall  inside {@code Go.syscall} (Go: not-in-go)
     */
    public record GoroutineStates(long runnable, long waiting, long syscall) {
    }
}
