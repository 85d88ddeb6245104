package io.gosched.service.job;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.runtime.GoRuntime;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;

/**
 * Jobs from submission to retention, as the controller sees them: admission control, the priority
 * queue, delayed starts and back-offs, runs as goroutines, cancellation, retries, idempotency and
 * bounded retention. One engine runs them, {@link JobEngine}, over the ports of
 * {@link io.gosched.service.job.spi}: in embedded mode (no cluster configured) over
 * {@link InMemoryJobQueue} and {@link InMemoryJobStore}, in cluster mode over the cluster's.
 *
 * <h2>Admission</h2>
 * A submission is refused before any memory is committed to it: 503 while shutting down, 429
 * (with Retry-After) when {@code maxQueuedJobs} jobs already wait. Accepted jobs wait in the
 * queue until both a running slot ({@code maxRunningJobs}) and their goroutine reservation
 * ({@code maxLiveGoroutines}, the validator's worst case for one run) are free; a job that
 * alone exceeds the goroutine budget is refused with 422 at submission.
 *
 * <h2>Memory</h2>
 * In embedded mode the in-memory store charges each job's record to the memory budget as it
 * moves (its request from submission: 429 when the budget has no room after evicting finished
 * jobs; its result and error once finished), and the engine charges a run's goroutine stacks and
 * own channels while it runs ({@link JobMemory}; 422 at submission when one job alone needs more
 * than its share). The head of the queue waits for its run's room as it waits for its goroutine
 * reservation. Under pressure the budget evicts finished jobs, oldest first, before refusing new
 * work ({@code gosched_jobs_evicted_total{reason="pressure"}}). When nothing runs, the head starts
 * even without room, so the budget can go over by one job's share at most. In cluster mode the
 * node charges what it runs; queued and finished jobs live in NATS, bounded by its limits.
 *
 * <h2>Queue order</h2>
 * Ten priority levels, 9 first; FIFO within a level. The head of the highest non-empty level
 * waits for its reservation rather than being overtaken, so priority order holds strictly.
 *
 * <p>Thread-safe. Called from Reactor threads (never blocking them) and from job goroutines.
 */
public final class JobService {

    private final ServiceBudget budget;
    private final JobEngine engine;
    /** The most of a job's goroutine dump its error keeps (a panic's detail): the record lives in the store, charged to the budget. */
    public static final int MAX_PANIC_DETAIL_CHARS = 64 * 1024;

    private final JobStore store;
    private final ServiceShutdown shutdown;

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
        this.store = store;
        this.shutdown = shutdown;
        JobMemory memory = new JobMemory(budget.memory(), budget.sizes().maxJobBytes());
        this.engine = new JobEngine(runtime, channels.registry(), channels.directory(), properties, metrics, specs, clock, memory, queue,
                store, node, shutdown);
        metrics.gauges(engine::runningHere, engine::waiting, channels.registry()::size);
    }

    /** The outcome of a submission: the job, and whether it was an Idempotency-Key replay. */
    public record Submitted(JobView job, boolean replayed) {}

    /** A page of jobs, newest first. */
    @io.swagger.v3.oas.annotations.media.Schema(name = "JobPage")
    public record Page(List<JobView> items, int page, int size, long total) {}

    // ---------------------------------------------------------------- submission

    /**
     * Validates and admits a job. Errors: 422 (invalid, with JSON pointers), 409 (same
     * Idempotency-Key, other body), 429 (queue full), 503 (shutting down).
     */
    public Submitted submit(JsonNode body, String idempotencyKey) {
        shutdown.refuseNewWork();
        String hash = null;
        if (idempotencyKey != null) {
            if (idempotencyKey.isEmpty() || idempotencyKey.length() > 255 || !idempotencyKey.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new InvalidRequestException("", "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
            }
            hash = sha256(body.toString());
        }
        return engine.submit(body, idempotencyKey, hash);
    }

    // ---------------------------------------------------------------- reads

    public JobView get(String id) {
        return engine.get(id);
    }

    public Page list(JobState state, int page, int size) {
        return list(new Filter(state, null, null, null, null), page, size);
    }

    public Page list(Filter filter, int page, int size) {
        return engine.list(filter::matches, page, size);
    }

    /**
     * What GET /api/v1/jobs filters by; a null member does not filter.
     *
     * @param submittedAfter   at or after this instant
     * @param submittedBefore  strictly before this instant
     */
    public record Filter(JobState state, String template, String name, java.time.Instant submittedAfter,
            java.time.Instant submittedBefore) {

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
        return engine.runningHere();
    }

    public int waitingJobs() {
        return (int) Math.min(Integer.MAX_VALUE, engine.waiting());
    }

    /**
     * SSE of the job: an event {@code state} on every state change, {@code progress} when its
     * counters move; ends after the final state, or when the application starts closing (open
     * streams would otherwise hold graceful shutdown for its whole timeout). Counts against
     * {@code max-open-streams}: 429 beyond it.
     */
    public Flux<JobEvent> events(String id) {
        return budget.streams().guard(Flux.defer(() -> engine.events(id)));
    }

    // ---------------------------------------------------------------- control

    /**
     * An exception escaped a goroutine (the runtime's uncaught-exception policy, called on the dying
     * goroutine): if its labels name a job this node runs, that job's attempt fails with it and the
     * dump of the job's goroutines. Jobs stay isolated: the service and its other jobs go on.
     *
     * @return true if the goroutine was one of a job running here
     */
    public boolean goroutineFailed(long goid, java.util.Map<String, String> labels, Throwable e) {
        return engine.goroutineFailed(goid, labels, e);
    }

    /** The answer of DELETE: the view, and whether the job is already cancelled (true) or will be shortly (false). */
    public record Cancelled(JobView job, boolean done) {}

    /** DELETE: a queued job is cancelled at once; a running one is asked through its context. 409 if final. */
    public Cancelled cancel(String id) {
        return engine.cancel(id);
    }

    /** POST .../retry: a failed, cancelled or timed-out job runs again with a fresh attempt budget. */
    public JobView retry(String id) {
        shutdown.refuseNewWork();
        return engine.retry(id);
    }

    /** First step of shutdown: refuse new work (503) and end every SSE stream. */
    public void beginShutdown() {
        shutdown.advance(ServiceShutdown.State.DRAINING);
    }

    public boolean isShuttingDown() {
        return shutdown.reached(ServiceShutdown.State.DRAINING);
    }

    /**
     * Stops running jobs and waits up to {@code grace} for them to end. Embedded mode cancels
     * every queued and running job (they live in this process); cluster mode hands them back to
     * the queue, to run on another node. Blocks the calling (lifecycle) thread; never call it from
     * a Reactor thread.
     *
     * @return true if no job is running any more
     */
    public boolean cancelAll(Duration grace) throws InterruptedException {
        beginShutdown();
        try {
            return store.isShared() ? engine.handBack(grace) : engine.cancelAll(grace);
        } finally {
            engine.close();
        }
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The engine, for the tests of its dispatch in this package. */
    JobEngine engine() {
        return engine;
    }
}
