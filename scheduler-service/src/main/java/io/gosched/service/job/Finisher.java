package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.UnaryOperator;

import io.gosched.service.ServiceShutdown;
import io.gosched.service.error.BackendException;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.workload.Run;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.JsonNode;

/**
 * The end of an attempt (protocol steps 3 to 5 and 7, {@code io.gosched.service.job.spi}): its
 * outcome written with a compare-and-set fenced on this node and attempt, a retry queued under
 * the next ticket, the lease completed; and the dead letter of a ticket nobody finished. Writes
 * are retried while the store cannot be reached: over a shared store a finish runs on a thread of
 * its own, never on a goroutine.
 *
 * <p>Thread-safe: each held job is finished once, by one caller.
 */
final class Finisher {

    private static final Log log = LogFactory.getLog(Finisher.class);
    private static final Duration RETRY_WRITE = Duration.ofMillis(500);

    private final JobStore store;
    private final JobQueue queue;
    private final JobNode node;
    private final Clock clock;
    private final ServiceMetrics metrics;
    private final JobMemory memory;
    private final JobSpecs specs;
    private final ServiceShutdown shutdown;

    Finisher(JobStore store, JobQueue queue, JobNode node, Clock clock, ServiceMetrics metrics, JobMemory memory, JobSpecs specs,
            ServiceShutdown shutdown) {
        this.store = store;
        this.queue = queue;
        this.node = node;
        this.clock = clock;
        this.metrics = metrics;
        this.memory = memory;
        this.specs = specs;
        this.shutdown = shutdown;
    }

    /**
     * Finish (protocol steps 3 to 5): the outcome goes in with a compare-and-set fenced on this
     * node and attempt, then the lease is completed. Retried while the store cannot be reached; a
     * runner whose attempt was taken over drops its outcome and its lease. The attempt's memory
     * goes back on every way out; its slot is the caller's to end.
     *
     * @param run  the attempt's run, or null if its main goroutine died before it had one
     * @param err  the run context's error, read before the context was cancelled on the way out
     */
    void finish(HeldJob l, Run run, RuntimeException err) {
        // A goroutine's escaped exception comes first: it is why the attempt's context was cancelled.
        JobRecord.Failure panic = l.panic.get();
        JobState outcome = panic != null || run == null ? JobState.FAILED : Attempt.outcome(run, l.state() == HeldJob.State.CANCELLING, err);
        Run.Failure f = outcome == JobState.TIMED_OUT ? new Run.Failure("", "the job ran past its timeout of " + l.spec.timeoutMs() + " ms")
                : run == null ? null : run.failure();
        JobRecord.Failure failure = panic != null ? panic : f == null ? null
                : new JobRecord.Failure(outcome == JobState.TIMED_OUT ? JobRecord.Failure.TIMEOUT : JobRecord.Failure.STEP, f.pointer(), f.detail());
        JobRecord.Counters counters = run == null ? JobRecord.Counters.ZERO
                : new JobRecord.Counters(run.goroutinesSpawned(), run.messagesSent(), run.messagesReceived(), run.stepsRun());
        // The run's goroutines are gone: its memory goes back before its outcome is visible, so that
        // whoever sees the final state finds the budget free of it (the finally below is a no-op then).
        memory.finish(l.charge, null, null);
        memory.evict(l.charge);
        try {
            if (l.state() == HeldJob.State.ABANDONED) {
                return; // shutdown: the lease goes back, the job's next attempt runs elsewhere
            }
            // A step's failure may rule a retry out (a target's 4xx: no attempt would change it); an escaped exception never does.
            boolean retry = (outcome == JobState.FAILED || outcome == JobState.TIMED_OUT) && l.state() != HeldJob.State.CANCELLING
                    && (panic != null || f == null || f.retryable());
            Instant notBefore = panic == null && f != null ? f.notBefore() : null;
            if (retry && notBefore != null && notBefore.isAfter(clock.instant().plusMillis(l.spec.retry().maxBackoffMs()))) {
                retry = false; // asked to come back later than any back-off may wait (gosched.api.limits.max-delay-ms): not earlier, so not at all
            }
            while (true) {
                if (l.state() == HeldJob.State.FENCED) {
                    l.lease.abandon();
                    return;
                }
                try {
                    if (write(l, outcome, retry, notBefore, counters, run == null ? null : run.lastReceived(), failure,
                            run == null ? null : run.report())) {
                        Leases.complete(l.lease);
                    } else {
                        l.lease.abandon(); // another node holds the job now
                    }
                    return;
                } catch (BackendException unreachable) {
                    if (shutdown.reached(ServiceShutdown.State.CLOSED)) {
                        l.lease.abandon();
                        return;
                    }
                    Leases.pause(RETRY_WRITE); // the lease stays renewed; if it lapses meanwhile, the fence decides
                }
            }
        } catch (RuntimeException e) {
            log.error("job " + l.id + ": the outcome of attempt " + l.attempt + " could not be written; its lease lapses and the job"
                    + " runs again elsewhere", e);
            l.lease.abandon();
        } finally {
            memory.finish(l.charge, null, null);
            memory.evict(l.charge); // the finished record lives in the store, not on this node
        }
    }

    /** The fenced compare-and-set of an attempt's outcome; false when the record names another attempt. */
    private boolean write(HeldJob l, JobState outcome, boolean retry, Instant notBefore, JobRecord.Counters counters, JsonNode received,
            JobRecord.Failure failure, JobRecord.Report report) {
        Instant now = clock.instant();
        UnaryOperator<JobRecord> change = r -> {
            JobRecord.Status s = r.status();
            if (s.state() != JobState.RUNNING || !node.id().equals(s.node()) || s.attempt() != l.attempt || s.ticket() != l.ticket) {
                return null;
            }
            if (retry && s.attemptsLeft(r.spec().maxAttempts())) {
                return r.withStatus(s.requeued(now, counters, received, failure, false).withProgress(report));
            }
            return r.withStatus(s.finished(outcome, now, counters, received, failure).withProgress(report));
        };
        JobStore.Update u = store.update(l.id, l.read, change);
        if (!u.applied()) {
            return false;
        }
        JobRecord.Status s = u.current().value().status();
        String type = JobType.of(l.recordSpec);
        ranFor(s, l.attempt).ifPresent(d -> metrics.attemptEnded(type, d));
        if (s.state() == JobState.QUEUED) {
            metrics.jobRetried(type);
            // The record names ticket n + 1 now: publish it until it is in (a retry is deduplicated by
            // message id). A crash before that is repaired by whoever gets ticket n again (orphanedRetry).
            Instant due = now.plusMillis(l.spec.retry().backoffBefore(s.attempt() + 1));
            if (notBefore != null && notBefore.isAfter(due)) {
                due = notBefore; // the target said when to come back (Retry-After): not earlier, whatever the back-off
            }
            while (true) {
                try {
                    queue.enqueue(l.lease.ticket().next(due));
                    break;
                } catch (BackendException unreachable) {
                    if (shutdown.reached(ServiceShutdown.State.CLOSED)) {
                        throw unreachable;
                    }
                    Leases.pause(RETRY_WRITE);
                }
            }
        } else {
            Instant started = s.startedAt();
            metrics.jobFinished(type, s.state().json(), started == null ? Duration.ZERO : Duration.between(started, now));
        }
        return true;
    }

    /**
     * How long attempt {@code attempt} ran, from the attempt {@code s} records as ended last: its
     * claim to its outcome, on the store's clock, as the record shows them. Empty if the record does
     * not hold that attempt (it always does right after this node wrote its outcome).
     */
    private static java.util.Optional<Duration> ranFor(JobRecord.Status s, int attempt) {
        if (s.attempts().isEmpty()) {
            return java.util.Optional.empty();
        }
        JobRecord.Attempt a = s.attempts().getLast();
        if (a.number() != attempt || a.startedAt() == null || a.finishedAt() == null) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(Duration.between(a.startedAt(), a.finishedAt()));
    }

    /** The dead letter (protocol step 7): the job fails as lost, unless its ticket is stale already. */
    void lost(JobTicket t, int deliveries) {
        Instant now = clock.instant();
        specs.forget(t.jobId());
        JobStore.Update u = store.update(t.jobId(), r -> Claims.stale(r, t) ? null : r.lost(now, deliveries));
        if (u.applied()) {
            metrics.jobFinished(JobType.of(u.current().value().spec()), JobState.FAILED.json(), Duration.ZERO);
            log.warn("job " + t.jobId() + " lost: delivered " + deliveries + " times and no node finished it");
        }
    }
}
