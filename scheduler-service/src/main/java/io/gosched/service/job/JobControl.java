package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.gosched.service.ServiceShutdown;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.metrics.ServiceMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What a client asks of a job it submitted, from any node: cancel it (protocol step 6: a queued
 * job at once, a running one through its context on whichever node runs it) or run it again
 * (a manual retry under the next ticket); and, for a node whose jobs live and die with it, the
 * cancel of them all at shutdown.
 *
 * <p>Thread-safe. Called from request threads; may block on a shared store.
 */
final class JobControl {

    private static final Log log = LogFactory.getLog(JobControl.class);

    private final JobStore store;
    private final JobQueue queue;
    private final JobNode node;
    private final Clock clock;
    private final ServiceMetrics metrics;
    private final JobSpecs specs;
    private final Pinning pinning;
    private final JobViews views;
    private final HeldJobs held;
    private final Slots slots;
    private final Dispatcher dispatcher;
    private final ServiceShutdown shutdown;

    JobControl(JobStore store, JobQueue queue, JobNode node, Clock clock, ServiceMetrics metrics, JobSpecs specs, Pinning pinning,
            JobViews views, HeldJobs held, Slots slots, Dispatcher dispatcher, ServiceShutdown shutdown) {
        this.store = store;
        this.queue = queue;
        this.node = node;
        this.clock = clock;
        this.metrics = metrics;
        this.specs = specs;
        this.pinning = pinning;
        this.views = views;
        this.held = held;
        this.slots = slots;
        this.dispatcher = dispatcher;
        this.shutdown = shutdown;
    }

    /** Cancel (protocol step 6), from any node. */
    JobService.Cancelled cancel(String id) {
        views.findSummary(id);
        Instant now = clock.instant();
        JobStore.Update u = store.update(id, r -> {
            JobRecord.Status s = r.status();
            if (s.state() == JobState.QUEUED || s.state() == JobState.WAITING) {
                return r.withStatus(s.finished(JobState.CANCELLED, now, JobRecord.Counters.ZERO, null, null));
            }
            if (s.state() == JobState.RUNNING && !s.cancelRequested()) {
                return r.withStatus(s.withCancelRequested());
            }
            return null;
        });
        if (u.current() == null) {
            throw new NotFoundException("job", id);
        }
        JobRecord r = u.current().value();
        JobRecord.Status s = r.status();
        if (s.state() == JobState.CANCELLED && u.applied()) {
            specs.forget(id);
            metrics.jobFinished(JobType.of(r.spec()), JobState.CANCELLED.json(), Duration.ZERO);
            try {
                queue.withdraw(new JobTicket(id, s.ticket(), r.spec().priority(), r.spec().notBefore(), pinning.pinQuietly(r)));
            } catch (RuntimeException e) {
                log.debug("withdraw of " + id + " failed; its ticket turns stale", e);
            }
            return new JobService.Cancelled(views.view(r), true);
        }
        if (s.state() == JobState.RUNNING) {
            HeldJob l = held.get(id);
            if (l != null && l.changed(r, node.id()) == HeldJob.Change.SUPERSEDED) { // do not wait for the change stream
                slots.wake();
            }
            return new JobService.Cancelled(views.view(r), false);
        }
        throw new ConflictException(ConflictException.Reason.JOB_FINISHED, "job '" + id + "' already finished as " + s.state().json())
                .with("state", s.state().json());
    }

    /** POST .../retry: a failed, cancelled or timed-out job runs again with a fresh attempt budget, from any node. */
    JobView retry(String id) {
        Versioned<JobRecord> cur = views.find(id);
        JobState st = cur.value().status().state();
        if (!st.isFinal() || st == JobState.SUCCEEDED) {
            throw new ConflictException(ConflictException.Reason.JOB_NOT_RETRYABLE,
                    "only a failed, cancelled or timed-out job can be retried; this one is " + st.json()).with("state", st.json());
        }
        String pin = pinning.pin(specs.parse(cur.value().spec()).workload());
        Instant now = clock.instant();
        JobRecord.Status s = cur.value().status();
        JobTicket next = new JobTicket(id, s.ticket() + 1, cur.value().spec().priority(), null, pin);
        queue.enqueue(next); // first: a ticket without its record's move is stale; a move without its ticket would wait for ever
        Optional<Versioned<JobRecord>> w = store.replace(cur.value().withStatus(s.requeued(now, JobRecord.Counters.ZERO, null, null, true)),
                cur.revision());
        if (w.isEmpty()) {
            try {
                queue.withdraw(next); // stale now; withdrawn, no node waits for its record to move
            } catch (RuntimeException e) {
                log.debug("withdraw of " + id + "'s retry ticket failed; it turns stale", e);
            }
            throw new ConflictException(ConflictException.Reason.JOB_BUSY, "job '" + id + "' changed state; try again");
        }
        return views.view(w.get().value());
    }

    /**
     * The shutdown of a node whose store lives in its process: the jobs live and die with it, so
     * every queued and running one is cancelled, and the running ones get up to {@code grace} to end.
     *
     * @return true if no job runs any more
     */
    boolean cancelAll(Duration grace) throws InterruptedException {
        shutdown.advance(ServiceShutdown.State.STOPPING);
        for (Versioned<JobRecord> v : store.list()) {
            JobState s = v.value().status().state();
            if (s == JobState.QUEUED || s == JobState.RUNNING || s == JobState.WAITING) {
                try {
                    cancel(v.value().id());
                } catch (NotFoundException | ConflictException raced) {
                    // it finished or went meanwhile: fine, it is not running for long either way
                }
            }
        }
        return dispatcher.awaitNoneHeld(grace);
    }
}
