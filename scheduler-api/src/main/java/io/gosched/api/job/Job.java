package io.gosched.api.job;

import java.time.Instant;

import io.gosched.api.workload.Run;
import io.gosched.time.Timer;
import tools.jackson.databind.JsonNode;

/**
 * One job: its spec, its state and the record of its attempts.
 *
 * <p>Concurrency: every mutable field is guarded by the job's monitor; the state moves only
 * through {@link #transition}, which fails loudly on an illegal move. Readers take a
 * {@link JobView} snapshot under the same monitor.
 */
final class Job {

    final String id;
    final JobSpec spec;
    /** SHA-256 of the request body as parsed, for Idempotency-Key replays; null without a key. */
    final String bodyHash;
    final String idempotencyKey;
    final Instant submittedAt;
    /** What the job holds of the memory budget; moved by {@link JobMemory} as the job moves. */
    final JobMemory.Charge charge;
    /** Queue order within a priority level: FIFO by this sequence, renewed on every (re)queue. */
    long seq;

    private JobState state = JobState.QUEUED;
    private int attempt;
    private Instant queuedAt;
    private Instant startedAt;
    private Instant finishedAt;
    private Run run;
    /** Counters of finished attempts, added up (the current attempt's are read from {@link #run}). */
    private long spawned, sent, received, steps;
    private Run.Failure error;
    /** Why {@link #error} happened: a {@code JobRecord.Failure} reason. */
    private String errorReason;
    private JsonNode lastReceived;
    /** The pending notBefore or back-off timer, stopped on cancel. */
    private Timer delay;
    private boolean cancelRequested;
    /** {@link #attempt} when the attempt budget was last reset (a manual retry resets it). */
    private int attemptBase;
    /** Bumped on each move to a final state: the retention queue's entries name the generation they retired. */
    private long generation;

    Job(String id, JobSpec spec, String idempotencyKey, String bodyHash, Instant now, JobMemory.Charge charge) {
        this.id = id;
        this.spec = spec;
        this.charge = charge;
        this.idempotencyKey = idempotencyKey;
        this.bodyHash = bodyHash;
        this.submittedAt = now;
        this.queuedAt = now;
    }

    synchronized JobState state() {
        return state;
    }

    /** Moves {@code from -> to}; returns false (and changes nothing) if the job is not in {@code from}. */
    synchronized boolean transition(JobState from, JobState to, Instant now) {
        if (state != from) {
            return false;
        }
        if (!from.canMoveTo(to)) {
            throw new IllegalStateException("job " + id + ": illegal transition " + from + " -> " + to);
        }
        state = to;
        switch (to) {
            case QUEUED -> {
                queuedAt = now;
                finishedAt = null;
                cancelRequested = false;
            }
            case RUNNING -> {
                attempt++;
                startedAt = now;
                error = null;
            }
            default -> {
                finishedAt = now;
                generation++;
                delay = null;
            }
        }
        return true;
    }

    synchronized int attempt() {
        return attempt;
    }

    /** True if the retry policy allows another automatic attempt. */
    synchronized boolean attemptsLeft() {
        return attempt - attemptBase < spec.retry().maxAttempts();
    }

    synchronized void resetAttemptBudget() {
        attemptBase = attempt;
    }

    synchronized long generation() {
        return generation;
    }

    synchronized Instant finishedAt() {
        return finishedAt;
    }

    synchronized Instant startedAt() {
        return startedAt;
    }

    synchronized void delay(Timer t) {
        this.delay = t;
    }

    /** Stops the pending delay timer; true if it had not fired yet. */
    synchronized boolean stopDelay() {
        Timer t = delay;
        delay = null;
        return t != null && t.stop();
    }

    /** Attaches the attempt's run; a DELETE that came before it cancels it at once. */
    synchronized void attach(Run r) {
        this.run = r;
        if (cancelRequested) {
            r.context().cancel();
        }
    }

    synchronized Run run() {
        return run;
    }

    /** Marks a DELETE of a running job and cancels its context; returns false if it is not running. */
    synchronized boolean requestCancel() {
        if (state != JobState.RUNNING) {
            return false;
        }
        cancelRequested = true;
        if (run != null) { // else attach() cancels it
            run.context().cancel();
        }
        return true;
    }

    synchronized boolean cancelRequested() {
        return cancelRequested;
    }

    /** Folds the finished attempt's counters and outcome into the job. Called by the run's goroutine. */
    synchronized void record(Run r, boolean timedOut) {
        errorReason = timedOut ? io.gosched.api.job.spi.JobRecord.Failure.TIMEOUT : io.gosched.api.job.spi.JobRecord.Failure.STEP;
        spawned += r.goroutinesSpawned();
        sent += r.messagesSent();
        received += r.messagesReceived();
        steps += r.stepsRun();
        error = r.failure();
        if (r.lastReceived() != null) {
            lastReceived = r.lastReceived();
        }
        run = null;
    }

    /** Records why an attempt ended before it had a run (the runtime refused its goroutine). */
    synchronized void fail(Run.Failure f) {
        error = f;
        errorReason = io.gosched.api.job.spi.JobRecord.Failure.REFUSED;
    }

    /** The last value a recv step took, over all attempts: the result once succeeded. */
    synchronized JsonNode lastReceived() {
        return lastReceived;
    }

    synchronized Run.Failure error() {
        return error;
    }

    synchronized JobView view() {
        Run r = run;
        long sp = spawned + (r == null ? 0 : r.goroutinesSpawned());
        long se = sent + (r == null ? 0 : r.messagesSent());
        long re = received + (r == null ? 0 : r.messagesReceived());
        long st = steps + (r == null ? 0 : r.stepsRun());
        Long durationMs = startedAt == null ? null
                : java.time.Duration.between(startedAt, finishedAt != null ? finishedAt : Instant.now()).toMillis();
        JobView.Result result = state == JobState.SUCCEEDED ? new JobView.Result(lastReceived) : null;
        return new JobView(id, state, spec.name(), spec.template(), spec.priority(), attempt, spec.retry().maxAttempts(),
                spec.timeoutMs(), submittedAt, spec.notBefore(), queuedAt, startedAt, finishedAt, durationMs,
                new JobView.Counters(sp, se, re, st, r == null ? 0 : r.liveGoroutines()), spec.workload().goroutines(),
                null, result, error == null ? null : new JobView.Error(errorReason, error.pointer(), error.detail()));
    }
}
