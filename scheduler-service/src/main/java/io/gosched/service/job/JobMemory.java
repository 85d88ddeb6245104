package io.gosched.service.job;

import java.util.List;

import io.gosched.service.budget.JsonSize;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.Retained;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.workload.Run;
import io.gosched.service.workload.Step;
import io.gosched.service.workload.Workload;
import tools.jackson.databind.JsonNode;

/**
 * What jobs hold of the {@link MemoryBudget}, step by step of their life, and the estimates of it
 * that every store uses. In embedded mode the in-memory store charges a job's record (request,
 * result, error, Idempotency-Key) under the kind of its state, and the engine a {@link Charge} for
 * the run; in cluster mode the engine charges a claimed job's request and run while this node
 * holds it:
 * <pre>
 *   submit   request (+ idempotency entry)             QUEUED_JOBS    refused: 429 (budget), 422 (one job's share)
 *   start    + goroutine stacks, own channels          RUNNING_JOBS   no room: the head of the queue waits (or, when
 *                                                                    nothing runs, starts anyway: see forceStart)
 *   retry    - stacks and channels                     QUEUED_JOBS
 *   finish   - stacks and channels, + result and error FINISHED_JOBS  forced: never refused
 *   evict    everything released (retention's bounds, or the budget's pressure)
 * </pre>
 * A job is charged its run's memory only while it runs: a queue of jobs that each could spawn
 * thousands of goroutines holds their requests, not their stacks.
 *
 * <h2>The estimates</h2>
 * The request is the validated workload as kept (its steps, their JSON pointers and literals,
 * counted by {@link JsonSize}) plus {@link #JOB_BYTES} for the job's own records; a goroutine is
 * {@link #GOROUTINE_BYTES}; an own channel is {@link ChannelRegistry#CHANNEL_BYTES} plus its slot
 * array. docs/memory.md compares them with measured heaps.
 *
 * <p>Thread-safe: each {@link Charge} is guarded by its own monitor, and every move starts from
 * the kind the charge is in, so a lifecycle race (a cancel against a start) cannot count twice.
 * The budget is called outside the monitor where it may run listeners or reclaimers.
 */
public final class JobMemory {

    /**
     * One goroutine of a running job, parked: its continuation's stack, its {@code G}, its
     * frame and wait state. Measured at 1.9 to 3.2 KB for the interpreter's goroutines parked in
     * a receive or a sleep at nesting depths 0 to 7 (docs/memory.md), rounded up for selects that
     * wait on many cases.
     */
    public static final long GOROUTINE_BYTES = 4096;
    /**
     * A job's own records besides its steps: the job, its id and timestamps, the store's map
     * entries, the retention queue's entry, the spec and retry policy. Calibrated so that a
     * finished one-step job (measured 670 bytes) is not underestimated.
     */
    public static final long JOB_BYTES = 640;
    /** An attempt's run: its context, counters, channel map and main goroutine's frame. */
    public static final long RUN_BYTES = 1024;

    private static final JsonSize.Layout L = JsonSize.layout();
    /** A step record: its pointer and up to three more fields. */
    private static final long STEP = L.object(3, 8);
    /** An immutable list: the list object and its array. */
    private static final long LIST = L.object(1, 4);

    /** What one job holds now, and under which kind. Created by {@link #admit}. */
    public static final class Charge {
        private final long request;
        private final long run;
        private final long key;
        private Retained kind; // guarded by this; null once released
        private long result; // guarded by this

        Charge(long request, long run, long key) {
            this.request = request;
            this.run = run;
            this.key = key;
            this.kind = Retained.QUEUED_JOBS;
        }

        /** Bytes of the request as kept, own records included. */
        public long request() {
            return request;
        }

        /** Bytes a run adds: goroutine stacks, own channels, the run's records. */
        public long run() {
            return run;
        }

        /** What holds the charge now; null once released. */
        public synchronized Retained kind() {
            return kind;
        }
    }

    private final MemoryBudget budget;
    private final long maxJobBytes;

    public JobMemory(MemoryBudget budget, long maxJobBytes) {
        this.budget = budget;
        this.maxJobBytes = maxJobBytes;
    }

    /**
     * 422 when the job alone needs more than one job's share of the budget; charges nothing. What
     * a cluster node checks at submission, where the job will be held by whichever node runs it.
     *
     * @return the request's bytes ({@link #requestBytes}), which the caller need not work out again
     */
    public long checkShare(JobSpec spec, String pointer) {
        long request = requestBytes(spec);
        long run = runBytes(spec.workload());
        if (request + run > maxJobBytes) {
            budget.refused(MemoryBudget.MAX_JOB_BYTES);
            throw new InvalidRequestException(pointer, "would hold about " + (request + run) + " bytes (request " + request
                    + ", goroutine stacks and own channels " + run + " for " + spec.workload().goroutines()
                    + " goroutines), more than one job's share of the memory budget, " + maxJobBytes + " bytes ("
                    + MemoryBudget.MAX_JOB_BYTES + ")");
        }
        return request;
    }

    /**
     * Cluster mode: a job this node claimed from the shared queue now lives here; its request is
     * charged as queued until it starts. Never refused: the claim already happened, and what the
     * node pulls is bounded by its running slots.
     */
    public Charge admitClaimed(JobSpec spec) {
        long request = requestBytes(spec);
        budget.force(Retained.QUEUED_JOBS, request);
        return new Charge(request, runBytes(spec.workload()), 0);
    }

    /**
     * Embedded mode: a job this node pulled from its in-memory queue, whose record (request and
     * result) the in-memory store charges already: the charge holds only what a run adds, from
     * {@link #tryStart} to {@link #finish}.
     */
    public Charge admitRun(JobSpec spec) {
        return new Charge(0, runBytes(spec.workload()), 0);
    }

    /** Cluster mode: a claimed job handed back before it started (shutdown); whatever it holds goes back. */
    public void abandonClaimed(Charge c) {
        abandon(c);
    }

    private void abandon(Charge c) {
        long bytes;
        synchronized (c) {
            if (c.kind != Retained.QUEUED_JOBS) {
                return;
            }
            c.kind = null;
            bytes = c.request + c.result;
        }
        budget.release(Retained.QUEUED_JOBS, bytes);
        budget.release(Retained.IDEMPOTENCY_KEYS, c.key);
    }

    /**
     * A queued job is about to run: charges its goroutine stacks and own channels. False only
     * when they do not fit now (after the budget's reclaimers ran); a job that is no longer
     * queued (cancelled meanwhile) needs nothing and gets true.
     */
    public boolean tryStart(Charge c) {
        return start(c, false);
    }

    /**
     * Starts a queued job whether or not its run fits: for the head of the queue when nothing
     * runs, so that a budget full of waiting requests cannot keep every job waiting. The budget
     * goes over by at most one job's share ({@code max-job-bytes}) until the job ends.
     */
    public void forceStart(Charge c) {
        start(c, true);
    }

    private boolean start(Charge c, boolean force) {
        synchronized (c) {
            if (c.kind != Retained.QUEUED_JOBS) {
                return true;
            }
        }
        if (force) {
            budget.force(Retained.RUNNING_JOBS, c.run);
        } else if (!budget.tryCharge(Retained.RUNNING_JOBS, c.run)) {
            return false;
        }
        synchronized (c) {
            if (c.kind == Retained.QUEUED_JOBS) {
                budget.move(Retained.QUEUED_JOBS, Retained.RUNNING_JOBS, c.request + c.result);
                c.kind = Retained.RUNNING_JOBS;
                return true;
            }
        }
        budget.release(Retained.RUNNING_JOBS, c.run); // it was cancelled while we charged
        return true;
    }

    /** The job reached a final state (from running, or cancelled while queued): it holds its request, result and error. */
    public void finish(Charge c, JsonNode result, Run.Failure error) {
        settle(c, Retained.FINISHED_JOBS, result, error);
    }

    /** A finished job leaves the store: everything it held goes back. Returns the bytes released. */
    public long evict(Charge c) {
        long bytes;
        synchronized (c) {
            if (c.kind != Retained.FINISHED_JOBS) {
                return 0;
            }
            c.kind = null;
            bytes = c.request + c.result;
        }
        budget.release(Retained.FINISHED_JOBS, bytes);
        budget.release(Retained.IDEMPOTENCY_KEYS, c.key);
        return bytes + c.key;
    }

    private void settle(Charge c, Retained to, JsonNode result, Run.Failure error) {
        long now = JsonSize.of(result) + errorBytes(error);
        Retained from;
        long delta;
        synchronized (c) {
            from = c.kind;
            if (from == null || from == Retained.FINISHED_JOBS) {
                return;
            }
            budget.move(from, to, c.request + c.result);
            delta = now - c.result;
            c.result = now;
            c.kind = to;
        }
        // Outside the monitor: a release wakes waiters, a forced charge may evict other jobs.
        if (from == Retained.RUNNING_JOBS) {
            budget.release(Retained.RUNNING_JOBS, c.run);
        }
        if (delta > 0) {
            budget.force(to, delta); // already held by the job: never refused
        } else {
            budget.release(to, -delta);
        }
    }

    /** Bytes a run adds to its request: goroutine stacks (the validator's worst case), own channels, the run's records. */
    public static long runBytes(Workload w) {
        long b = RUN_BYTES + w.goroutines() * GOROUTINE_BYTES;
        for (Workload.ChannelDecl d : w.channels()) {
            b += ChannelRegistry.CHANNEL_BYTES + L.refArray(d.capacity());
        }
        return b;
    }

    /** Bytes of a validated request as the store keeps it. */
    public static long requestBytes(JobSpec spec) {
        Workload w = spec.workload();
        long b = JOB_BYTES + JsonSize.string(spec.name()) + JsonSize.string(spec.template()) + JsonSize.of(spec.params())
                + steps(w.steps());
        b += LIST + L.refArray(w.channels().size());
        for (Workload.ChannelDecl d : w.channels()) {
            b += L.object(1, 4) + JsonSize.string(d.name());
        }
        b += LIST + L.refArray(4L * w.sharedChannels().size());
        for (var e : w.sharedChannels().entrySet()) {
            b += JsonSize.string(e.getKey()) + JsonSize.string(e.getValue());
        }
        return b;
    }

    private static long steps(List<Step> steps) {
        long b = LIST + L.refArray(steps.size());
        for (Step s : steps) {
            b += STEP + JsonSize.string(s.pointer());
            switch (s) {
                case Step.Spawn sp -> b += steps(sp.steps());
                case Step.Loop l -> b += steps(l.steps());
                case Step.Send se -> b += JsonSize.string(se.channel()) + JsonSize.of(se.value());
                case Step.Recv r -> b += JsonSize.string(r.channel());
                case Step.Close c -> b += JsonSize.string(c.channel());
                case Step.Select sel -> {
                    b += LIST + L.refArray(sel.cases().size());
                    for (Step.Case c : sel.cases()) {
                        b += STEP + JsonSize.string(c.pointer()) + JsonSize.string(c.channel()) + JsonSize.of(c.value());
                    }
                }
                default -> { }
            }
        }
        return b;
    }

    private static long errorBytes(Run.Failure f) {
        return f == null ? 0 : L.object(2, 0) + JsonSize.string(f.pointer()) + JsonSize.string(f.detail());
    }
}
