package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.gosched.runtime.GoRuntime;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.metrics.ServiceMetrics;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;

/**
 * Jobs from submission to retention, as their callers see them: admission control, the priority
 * queue, delayed starts and back-offs, runs as goroutines, cancellation, retries, idempotency and
 * bounded retention. One protocol runs them ({@code io.gosched.service.job.spi}) over the ports
 * this node has: its own memory's by default, a cluster's when one contributes them. Each concern
 * is a class of this package:
 * <pre>
 *   submit ──▶ Admission ──▶ store.create, queue.enqueue          (JobSpecs parses, Pinning places)
 *   queue ──▶ Dispatcher ──▶ Claims.pulled ──▶ Slots (waits for room) ──▶ Claims.claim ──▶ goroutines
 *   goroutines end ──▶ Finisher (outcome, retry, ack) ──▶ Dispatcher.ended (slot refilled)
 *   panics ──▶ Panics ──▶ Finisher            chores ──▶ Chores (progress, repairs, retention)
 *   get, list, events ──▶ JobViews            cancel, retry ──▶ JobControl
 *   submit with "after" ──▶ store.create (waiting, no ticket) ──▶ Dependencies (watch, sweep) ──▶ queued + ticket, or cancelled
 * </pre>
 * A job this node holds is a {@link HeldJob}, one state field with an asserting transition.
 *
 * <h2>Admission</h2>
 * A submission is refused before any memory is committed to it: while the node shuts down, or
 * when {@code maxQueuedJobs} jobs already wait. Accepted jobs wait in the queue until both a
 * running slot ({@code maxRunningJobs}) and their goroutine reservation ({@code maxLiveGoroutines},
 * the validator's worst case for one run) are free; a job that alone exceeds the goroutine budget
 * is refused as invalid at submission.
 *
 * <h2>Memory</h2>
 * Over the in-memory store, the store charges each job's record to the memory budget as it moves
 * (its request from submission: refused when the budget has no room after evicting finished jobs;
 * its result and error once finished), and the dispatcher charges a run's goroutine stacks and own
 * channels while it runs ({@link JobMemory}; invalid at submission when one job alone needs more
 * than its share). The head of the queue waits for its run's room as it waits for its goroutine
 * reservation. Under pressure the budget evicts finished jobs, oldest first, before refusing new
 * work ({@code gosched_jobs_evicted_total{reason="pressure"}}). When nothing runs, the head starts
 * even without room, so the budget can go over by one job's share at most. Over a shared store
 * the node charges what it holds (a claimed job's request and run); queued and finished jobs live
 * in NATS, bounded by its limits.
 *
 * <h2>Queue order</h2>
 * Ten priority levels, 9 first; FIFO within a level. The head of the highest non-empty level
 * waits for its reservation rather than being overtaken, so priority order holds strictly.
 *
 * <p>Thread-safe. Called from request threads (never blocking an event loop over the in-memory
 * ports) and from job goroutines.
 */
public final class JobService {

    /** The most of a job's goroutine dump its error keeps (a panic's detail): the record lives in the store, charged to the budget. */
    public static final int MAX_PANIC_DETAIL_CHARS = 64 * 1024;

    private final ServiceBudget budget;
    private final JobStore store;
    private final ServiceShutdown shutdown;
    private final HeldJobs held = new HeldJobs();
    private final Slots slots;
    private final JobViews views;
    private final Chores chores;
    private final Dispatcher dispatcher;
    private final Panics panics;
    private final Admission admission;
    private final JobControl control;
    private final Dependencies deps;
    private final JobSpecs specs;
    private final AutoCloseable changes;

    /**
     * The job service over its ports: in memory by default ({@code InMemoryJobQueue},
     * {@code InMemoryJobStore}, {@code SoleNode}), a cluster's when one contributes them.
     *
     * @param channels  the named channels jobs share with HTTP clients, and where each lives
     * @param specs     the job bodies' parser, and the store's sizes of the requests it keeps
     * @param clock     the records' times (submitted, started, finished) and ages
     * @param shutdown  this node's shutdown state, which the named channels share
     */
    public JobService(GoRuntime runtime, ChannelService channels, ServiceProperties properties, ServiceMetrics metrics, JobSpecs specs,
            Clock clock, ServiceBudget budget, JobQueue queue, JobStore store, JobNode node, ServiceShutdown shutdown) {
        this.budget = budget;
        this.specs = specs;
        this.store = store;
        if (store.isShared()) {
            specs.shared(); // other nodes may have handlers this one lacks
        }
        this.shutdown = shutdown;
        JobMemory memory = new JobMemory(budget.memory(), budget.sizes().maxJobBytes());
        Pinning pinning = new Pinning(channels.registry(), channels.directory(), node, specs);
        this.slots = new Slots(properties.admission(), memory, shutdown);
        this.views = new JobViews(store, held, runtime, clock, shutdown, h -> specs.hasHandler(h) || node.hasHandlerSomewhere(h));
        this.chores = new Chores(held, store, queue, node, clock, metrics, pinning, properties.retention());
        CreatedHere createdHere = new CreatedHere();
        Claims claims = new Claims(held, store, queue, node, clock, specs, memory, chores, createdHere);
        Finisher finisher = new Finisher(store, queue, node, clock, metrics, memory, specs, shutdown);
        this.dispatcher = new Dispatcher(slots, held, claims, finisher, memory, runtime, channels.registry(), node, queue, store, shutdown);
        this.panics = new Panics(held, runtime, dispatcher);
        this.deps = new Dependencies(store, queue, clock, metrics, specs, pinning);
        this.admission = new Admission(store, queue, specs, pinning, memory, properties.admission(), metrics, clock, views, shutdown,
                dispatcher::waiting, deps, createdHere);
        this.control = new JobControl(store, queue, node, clock, metrics, specs, pinning, views, held, slots, dispatcher, shutdown);
        queue.onLost(finisher::lost);
        this.changes = store.watchAll((id, r) -> {
            HeldJob l = held.get(id);
            if (l != null && l.changed(r, node.id()) == HeldJob.Change.SUPERSEDED) {
                slots.wake(); // the dispatcher drops it: the next one may start
            }
            views.changed(id, r);
            deps.changed(id, r);
            createdHere.changed(id, r);
        });
        chores.start(views::forgetStaleProgress);
        deps.start();
        dispatcher.start();
        metrics.gauges(dispatcher::runningHere, dispatcher::waiting, channels.registry()::size);
    }

    /** The outcome of a submission: the job, and whether it was an Idempotency-Key replay. */
    public record Submitted(JobView job, boolean replayed) {}

    /** A page of jobs, newest first. */
    @io.swagger.v3.oas.annotations.media.Schema(name = "JobPage")
    public record Page(List<JobView> items, int page, int size, long total) {}

    // ---------------------------------------------------------------- submission

    /**
     * Validates and admits a job ({@link Admission}). Errors: invalid (with JSON pointers), a
     * conflict (the same Idempotency-Key with another body), refused (the queue or the memory
     * budget is full), shutting down.
     */
    public Submitted submit(JsonNode body, String idempotencyKey) {
        return admission.submit(body, idempotencyKey);
    }

    /**
     * POST /api/v1/jobs/batch: {@code {"jobs": [{"key": "a", ...a job body...}, ...]}}, at most 1,000, all admitted or
     * none ({@link Admission#submitBatch}). Errors: invalid (each bad entry by pointer, cycles included), refused (the
     * queue cannot take them all), shutting down.
     *
     * @return the jobs' ids in the order of the entries
     */
    public List<String> submitBatch(JsonNode body) {
        return admission.submitBatch(body);
    }

    /**
     * Admits the job of tick {@code scheduledFor} of schedule {@code schedule} under {@code jobId},
     * an id derived from both, with the checks and errors of {@link #submit}: a tick fired on two
     * nodes makes one job (the store creates a record only if its id is free). An existing job of
     * that id is answered as a replay, queued again first if it was stored but never queued.
     */
    public Submitted submitScheduled(JsonNode body, String jobId, String schedule, Instant scheduledFor) {
        return admission.submitScheduled(body, new Admission.Scheduled(jobId, schedule, scheduledFor));
    }

    /**
     * Checks a job body as {@link #submit} parses it, without admitting anything: what a schedule
     * checks its job with when it is made.
     *
     * @throws io.gosched.service.error.InvalidRequestException listing every violation
     */
    public void validate(JsonNode body, Instant now) {
        specs.parse(body, now);
    }

    // ---------------------------------------------------------------- reads

    /** The job as its record stands, with the live counters of a running attempt wherever it runs; not found if it is no job's. */
    public JobView get(String id) {
        return views.view(views.findSummary(id).value());
    }

    public Page list(JobState state, int page, int size) {
        return list(new Filter(state, null, null, null, null), page, size);
    }

    public Page list(Filter filter, int page, int size) {
        return views.list(filter::matches, page, size);
    }

    /**
     * What GET /api/v1/jobs filters by; a null member does not filter.
     *
     * @param submittedAfter   at or after this instant
     * @param submittedBefore  strictly before this instant
     */
    public record Filter(JobState state, String template, String name, Instant submittedAfter, Instant submittedBefore) {

        boolean matches(JobView v) {
            return (state == null || v.state() == state)
                    && (template == null || template.equals(v.template()))
                    && (name == null || name.equals(v.name()))
                    && (submittedAfter == null || !v.submittedAt().isBefore(submittedAfter))
                    && (submittedBefore == null || v.submittedAt().isBefore(submittedBefore));
        }
    }

    /** Jobs held now, finished ones included: what retention bounds. */
    public int size() {
        return store.size();
    }

    /** Attempts running on this node now. */
    public int runningJobs() {
        return dispatcher.runningHere();
    }

    public int waitingJobs() {
        return (int) Math.min(Integer.MAX_VALUE, dispatcher.waiting());
    }

    /**
     * The events of the job: {@code state} on every state change, {@code progress} when its
     * counters move; ends after the final state, or when the node starts draining (open streams
     * would otherwise hold graceful shutdown for its whole timeout). Counts against
     * {@code max-open-streams}: refused beyond it.
     */
    public Flux<JobEvent> events(String id) {
        return budget.streams().guard(Flux.defer(() -> views.events(id)));
    }

    // ---------------------------------------------------------------- control

    /**
     * An exception escaped a goroutine (the runtime's uncaught-exception policy, called on the dying
     * goroutine): if its labels name a job this node runs, that job's attempt fails with it and the
     * dump of the job's goroutines ({@link Panics}). Jobs stay isolated: the service and its other
     * jobs go on.
     *
     * @return true if the goroutine was one of a job running here
     */
    public boolean goroutineFailed(long goid, Map<String, String> labels, Throwable e) {
        return panics.goroutineFailed(goid, labels, e);
    }

    /** The answer of DELETE: the view, and whether the job is already cancelled (true) or will be shortly (false). */
    public record Cancelled(JobView job, boolean done) {}

    /** DELETE: a queued job is cancelled at once; a running one is asked through its context. A conflict if final. */
    public Cancelled cancel(String id) {
        return control.cancel(id);
    }

    /** POST .../retry: a failed, cancelled or timed-out job runs again with a fresh attempt budget. */
    public JobView retry(String id) {
        shutdown.refuseNewWork();
        return control.retry(id);
    }

    /** First step of shutdown: the node drains (refuses new work, ends every event stream); see {@link ServiceShutdown}. */
    public void beginShutdown() {
        shutdown.advance(ServiceShutdown.State.DRAINING);
    }

    public boolean isShuttingDown() {
        return shutdown.reached(ServiceShutdown.State.DRAINING);
    }

    /**
     * Stops running jobs and waits up to {@code grace} for them to end: over a store in this
     * process every queued and running job is cancelled (they live in this process); over a shared
     * store they are handed back to the queue, to run on another node. Then the node is closed.
     * Blocks the calling (lifecycle) thread; never call it from an event loop.
     *
     * @return true if no job is running any more
     */
    public boolean cancelAll(Duration grace) throws InterruptedException {
        beginShutdown();
        try {
            return store.isShared() ? dispatcher.handBack(grace) : control.cancelAll(grace);
        } finally {
            dispatcher.close();
            closeQuietly(changes);
            views.close();
            chores.close();
            deps.close();
        }
    }

    /** The dispatcher, for the tests of its dispatch in this package. */
    Dispatcher dispatcher() {
        return dispatcher;
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing to do
        }
    }
}
