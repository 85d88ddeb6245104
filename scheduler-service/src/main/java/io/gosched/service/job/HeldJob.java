package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.workload.Run;

/**
 * One job this node holds: pulled from the queue and waiting here for room, then claimed and
 * running, until its slot goes back. Its life is one {@link State} changed only through
 * {@link #transition}, which refuses an illegal move as Go's {@code casgstatus} refuses one for a
 * G. The record in the store stays the truth; this is what the node does about it.
 */
final class HeldJob {

    /**
     * Where a held job stands. Legal moves ({@link #canMoveTo}), the happy path first:
     * <pre>
     *   WAITING ─pick─▶ CLAIMING ─claim landed─▶ RUNNING ───────────────────────────────▶ ENDED
     *   WAITING ─record moved on─▶ SUPERSEDED ─dropped─▶ ENDED
     *   WAITING, SUPERSEDED ─node stops─▶ HANDED_BACK ─▶ ENDED
     *   CLAIMING ─cancel seen─▶ CLAIMING_CANCELLED ─claim landed─▶ CANCELLING
     *   CLAIMING ─claim landed, record asks to cancel─▶ CANCELLING
     *   CLAIMING, CLAIMING_CANCELLED ─record moved on─▶ DROPPED ─▶ ENDED
     *   CLAIMING, CLAIMING_CANCELLED ─no answer─▶ ABANDONED
     *   RUNNING ─record asks to cancel─▶ CANCELLING ─▶ ENDED
     *   RUNNING, CANCELLING ─later attempt elsewhere─▶ FENCED ─▶ ENDED
     *   RUNNING, CANCELLING, FENCED ─node stops, runtime refuses─▶ ABANDONED ─▶ ENDED
     * </pre>
     * Room for what comes next: a job waiting on other jobs ({@code after}) waits in the store,
     * not here; a state for it goes before WAITING, and nothing below it changes.
     */
    enum State {
        /** Pulled, waiting on this node for its goroutine reservation and memory; its record is still queued. Holds a running slot, no reservation (it is in {@code Slots.waitingForRoom}). Moved by the dispatcher (pick), the store's watch, shutdown. */
        WAITING,
        /** Waited, and its record moved on meanwhile (cancelled, taken by another node): dropped instead of claimed, its lease completed. */
        SUPERSEDED,
        /** Waited, and the node stops: its lease goes back at once for another node. Never reserved goroutines. */
        HANDED_BACK,
        /** Picked: its goroutines and memory are reserved; the claim's compare-and-set is under way ({@link #attempt} still 0). Owned by the claimer. */
        CLAIMING,
        /** Claiming, and a record asking to cancel was seen: the claim may have landed unseen; the claimer runs it cancelled. */
        CLAIMING_CANCELLED,
        /** Claimed as attempt {@link #attempt}: its goroutines run. */
        RUNNING,
        /** Running, and its record asks to cancel: its context is cancelled, its outcome is cancelled (never retried). */
        CANCELLING,
        /** A later attempt runs elsewhere (this lease lapsed): ours stops, its outcome is not ours to write, its lease is abandoned. */
        FENCED,
        /** The claim found its record moved on: dropped, its lease completed. Reserved goroutines until it ends. */
        DROPPED,
        /** The claim got no answer, the runtime refused the job, or the node stops: no outcome is written, the lease goes back (or lapses). */
        ABANDONED,
        /** Its slot, and any reservation, went back: no longer held. */
        ENDED;

        private static final Map<State, Set<State>> MOVES = Map.ofEntries(
                Map.entry(WAITING, EnumSet.of(CLAIMING, SUPERSEDED, HANDED_BACK)),
                Map.entry(SUPERSEDED, EnumSet.of(HANDED_BACK, ENDED)),
                Map.entry(HANDED_BACK, EnumSet.of(ENDED)),
                Map.entry(CLAIMING, EnumSet.of(CLAIMING_CANCELLED, RUNNING, CANCELLING, DROPPED, ABANDONED)),
                Map.entry(CLAIMING_CANCELLED, EnumSet.of(CANCELLING, DROPPED, ABANDONED)),
                Map.entry(RUNNING, EnumSet.of(CANCELLING, FENCED, ABANDONED, ENDED)),
                Map.entry(CANCELLING, EnumSet.of(FENCED, ABANDONED, ENDED)),
                Map.entry(FENCED, EnumSet.of(ABANDONED, ENDED)),
                Map.entry(DROPPED, EnumSet.of(ENDED)),
                Map.entry(ABANDONED, EnumSet.of(ENDED)),
                Map.entry(ENDED, EnumSet.noneOf(State.class)));

        /** True if the diagram above allows {@code this -> to}. */
        boolean canMoveTo(State to) {
            return MOVES.get(this).contains(to);
        }

        /** True once picked: its goroutines count in the reservation (until it ends); false while it waits or if it never left the wait. */
        boolean picked() {
            return this != WAITING && this != SUPERSEDED && this != HANDED_BACK;
        }
    }

    /** What a change of the job's record meant for this node. */
    enum Change {
        /** Nothing for the dispatcher to do. */
        NONE,
        /** A waiting job's record moved on: the dispatcher drops it, and the next one may start. */
        SUPERSEDED
    }

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(HeldJob.class, "state", State.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final String id;
    final JobSpec spec;
    final JobRecord.Spec recordSpec;
    final long ticket;
    volatile JobLease lease;
    final JobMemory.Charge charge;
    /** The labels every goroutine of the attempt carries: job=<id> and its template. */
    final Map<String, String> labels;
    @SuppressWarnings("unused") // read and written through STATE
    private volatile State state = State.WAITING;
    /** The attempt this node runs; 0 until the claim's compare-and-set landed. Written before the move out of CLAIMING. */
    volatile int attempt;
    volatile Run run;
    /** The goroutine that runs the attempt's main body; 0 until it starts. */
    volatile long rootGoid;
    /** The first exception that escaped one of the attempt's goroutines, as the job's error: it fails the attempt. */
    final AtomicReference<JobRecord.Failure> panic = new AtomicReference<>();
    /** The results of the jobs its {@code result} steps name, read at the pull ({@code Claims}). */
    volatile java.util.Map<String, tools.jackson.databind.JsonNode> results = java.util.Map.of();
    /** The counters the chores last published for it. Touched only by the chores thread. */
    JobRecord.Counters lastPublished;
    /** The progress report the chores last published for it. Touched only by the chores thread. */
    JobRecord.Report lastReport;
    /** The record as this node last read (the pull) or wrote (the claim) it: where the next compare-and-set starts. */
    volatile Versioned<JobRecord> read;

    HeldJob(String id, JobSpec spec, JobRecord.Spec recordSpec, long ticket, JobLease lease, JobMemory.Charge charge) {
        this.id = id;
        this.spec = spec;
        this.recordSpec = recordSpec;
        this.ticket = ticket;
        this.lease = lease;
        this.charge = charge;
        this.labels = spec.template() == null ? Map.of("job", id) : Map.of("job", id, "template", spec.template());
    }

    State state() {
        return (State) STATE.getAcquire(this);
    }

    /**
     * Moves {@code from -> to} if the job is still in {@code from}. Go: runtime/proc.go casgstatus
     * (which spins until it can; here a lost race means another thread moved the job, and the
     * caller decides again).
     *
     * @return false if the job is no longer in {@code from}
     * @throws IllegalStateException if the diagram of {@link State} does not allow the move
     */
    boolean transition(State from, State to) {
        if (!from.canMoveTo(to)) {
            throw new IllegalStateException("job " + id + ": illegal transition " + from + " -> " + to);
        }
        return STATE.compareAndSet(this, from, to);
    }

    /** Cancels the attempt's context, if its run started: every goroutine of it ends. */
    void cancel() {
        Run r = run;
        if (r != null) {
            r.context().cancel();
        }
    }

    /**
     * The store's record moved: a DELETE from any node, or another node took the job over.
     * Called on the store's watch thread, and by a cancel on this node.
     */
    Change changed(JobRecord r, String nodeId) {
        if (r == null) {
            return Change.NONE; // removed: only retention removes, and only final records
        }
        JobRecord.Status s = r.status();
        while (true) {
            State st = state();
            switch (st) {
                case WAITING -> {
                    if (!Claims.stale(r, ticket)) {
                        return Change.NONE;
                    }
                    if (transition(State.WAITING, State.SUPERSEDED)) {
                        return Change.SUPERSEDED;
                    }
                }
                case CLAIMING -> {
                    // The claim's compare-and-set may have landed and the attempt not be written yet: a
                    // cancel here would be dropped as "not claimed" and the job run to its end. The claim
                    // moves out of CLAIMING_CANCELLED into CANCELLING; a claim that moved first is RUNNING,
                    // and the loop handles the cancel as a running job's.
                    if (!s.cancelRequested() || transition(State.CLAIMING, State.CLAIMING_CANCELLED)) {
                        return Change.NONE;
                    }
                }
                case RUNNING, CANCELLING -> {
                    boolean ours = s.state() == JobState.RUNNING && nodeId.equals(s.node()) && s.attempt() == attempt;
                    if (ours && s.cancelRequested()) {
                        if (st == State.CANCELLING || transition(State.RUNNING, State.CANCELLING)) {
                            cancel();
                            return Change.NONE;
                        }
                    } else if (!ours && (s.attempt() > attempt || s.ticket() != ticket)) {
                        if (transition(st, State.FENCED)) {
                            cancel(); // a later attempt runs elsewhere: ours stops, its outcome is not ours to write
                            return Change.NONE;
                        }
                    } else {
                        return Change.NONE;
                    }
                }
                default -> {
                    return Change.NONE; // superseded, claimed-and-cancelled, fenced, dropped, abandoned, ended: nothing changes
                }
            }
        }
    }

    /**
     * The claim's compare-and-set landed as attempt {@code n}: the job runs, cancelled if its
     * record asked for it then or a cancel was seen during the claim. A job abandoned meanwhile
     * (the node stops) stays abandoned; it runs cancelled and writes nothing.
     */
    void claimed(int n, boolean cancelRequested) {
        attempt = n; // before the move: a change seen as RUNNING reads it
        while (true) {
            State st = state();
            switch (st) {
                case CLAIMING -> {
                    if (transition(State.CLAIMING, cancelRequested ? State.CANCELLING : State.RUNNING)) {
                        return;
                    }
                }
                case CLAIMING_CANCELLED -> {
                    if (transition(State.CLAIMING_CANCELLED, State.CANCELLING)) {
                        return;
                    }
                }
                case ABANDONED -> {
                    return;
                }
                default -> throw new IllegalStateException("job " + id + ": claimed while " + st);
            }
        }
    }

    /** The claim did not land (its record moved on), or got no answer ({@code abandoned}): the job will not run here. */
    void claimFailed(boolean abandoned) {
        State to = abandoned ? State.ABANDONED : State.DROPPED;
        while (true) {
            State st = state();
            if (st == State.ABANDONED || transition(st, to)) {
                return;
            }
        }
    }

    /**
     * The node stops (or the runtime refused the job): no outcome will be written and the lease
     * goes back. Any claiming or running job, a fenced one too (whose outcome was not this node's
     * anyway); one that waits goes back through {@code Slots} instead, one that ended is left.
     *
     * @return false if the job was not running or claiming (nothing changed)
     */
    boolean abandon() {
        while (true) {
            State st = state();
            switch (st) {
                case CLAIMING, CLAIMING_CANCELLED, RUNNING, CANCELLING, FENCED -> {
                    if (transition(st, State.ABANDONED)) {
                        return true;
                    }
                }
                default -> {
                    return false;
                }
            }
        }
    }

    /** True while claimed and running on: not asked to cancel, not fenced, not abandoned. */
    boolean runsOn() {
        return state() == State.RUNNING;
    }

    @Override
    public String toString() {
        return "job " + id + " (ticket " + ticket + ", attempt " + attempt + ", " + state() + ")";
    }
}
