package io.gosched.api.job;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.channel.spi.ChannelDirectory;
import io.gosched.api.error.ApiProblem;
import io.gosched.api.job.spi.JobNode;
import io.gosched.api.job.spi.JobQueue;
import io.gosched.api.job.spi.JobStore;
import io.gosched.api.workload.Interpreter;
import io.gosched.api.workload.Run;
import io.gosched.api.workload.Violation;
import io.gosched.api.workload.Workload;
import io.gosched.api.workload.WorkloadParser;
import io.gosched.api.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;
import io.gosched.time.Time;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;

import org.springframework.http.codec.ServerSentEvent;

/**
 * Jobs from submission to retention: admission control, the priority queue, delayed starts and
 * back-offs on the runtime's timers, runs as goroutines, cancellation, retries, idempotency and
 * bounded retention.
 *
 * <h2>Admission</h2>
 * A submission is refused before any memory is committed to it: 503 while shutting down, 429
 * (with Retry-After) when {@code maxQueuedJobs} jobs already wait. Accepted jobs wait in the
 * queue until both a running slot ({@code maxRunningJobs}) and their goroutine reservation
 * ({@code maxLiveGoroutines}, the validator's worst case for one run) are free; a job that
 * alone exceeds the goroutine budget is refused with 422 at submission.
 *
 * <h2>Memory</h2>
 * {@link JobMemory} charges each job to the memory budget as it moves: its request from
 * submission (429 when the budget has no room after evicting finished jobs, 422 when one job
 * alone needs more than its share), its goroutine stacks and own channels while it runs (the
 * head of the queue waits for them as it waits for its goroutine reservation), its result and
 * error once finished. Under pressure the budget evicts finished jobs, oldest first, before
 * refusing new work ({@code gosched_jobs_evicted_total{reason="pressure"}}). When nothing runs, the
 * head starts even without room, so the budget can go over by one job's share at most.
 *
 * <h2>Queue order</h2>
 * Ten priority levels, 9 first; FIFO within a level. The head of the highest non-empty level
 * waits for its reservation rather than being overtaken, so priority order holds strictly.
 *
 * <h2>Ownership of counters</h2>
 * {@code waiting} is decremented by whoever wins the move out of QUEUED (dispatch to RUNNING,
 * or DELETE to CANCELLED), never by both. {@code running} and {@code reserved} are guarded by
 * {@code queueLock}.
 *
 * <p>Thread-safe. Called from Reactor threads (never blocking them) and from job goroutines.
 */
public final class JobService {

    private final GoRuntime runtime;
    private final ChannelService channels;
    private final ApiProperties properties;
    private final ApiMetrics metrics;
    private final JobSpecParser parser;
    private final Interpreter interpreter = new Interpreter();
    private final Clock clock;
    private final JobMemory memory;
    private final ServiceBudget budget;
    /** Set while a job waits at the head of the queue for budget room and a release will dispatch again. */
    private final AtomicBoolean dispatchOnFree = new AtomicBoolean();

    private final ConcurrentHashMap<String, Job> jobs = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Job> byIdempotencyKey = new ConcurrentHashMap<>();

    /** Finished jobs in the order they finished; an entry is stale once its job moved on (retry). */
    private record Retired(Job job, long generation, Instant finishedAt) {}

    private final ConcurrentLinkedQueue<Retired> retired = new ConcurrentLinkedQueue<>();
    private final AtomicInteger retiredCount = new AtomicInteger();

    private final Object queueLock = new Object();
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Job>[] levels = new ArrayDeque[JobSpec.MAX_PRIORITY + 1]; // guarded by queueLock
    private long nextSeq; // guarded by queueLock
    private int running; // guarded by queueLock: admission slots held, freed once the job is retired
    /**
     * Attempts running now (what gosched.jobs.live shows); guarded by queueLock. It drops before
     * a job's final state becomes visible, while its admission slot ({@code running}) is freed only
     * after the finished job is in the retention queue, so the store never holds more than the
     * admission and retention bounds allow.
     */
    private int live;
    private long reserved; // goroutines reserved by running jobs; guarded by queueLock
    private final AtomicInteger waiting = new AtomicInteger();

    private volatile boolean shuttingDown;
    private final Sinks.Empty<Void> shutdown = Sinks.empty();
    /** Cluster mode: the protocol over the shared queue and store; null in embedded mode. */
    private final ClusterJobs cluster;

    public JobService(GoRuntime runtime, ChannelService channels, ApiProperties properties, ApiMetrics metrics,
            WorkloadParser workloads, WorkloadTemplates templates, Clock clock, ServiceBudget budget) {
        this(runtime, channels, properties, metrics, workloads, templates, clock, budget, null);
    }

    /**
     * The ports a cluster provides: jobs are queued and stored there, and this node runs what it
     * pulls. Null: embedded mode, everything in this node's memory.
     */
    public record Ports(JobQueue queue, JobStore store, JobNode node, ChannelDirectory directory) {}

    public JobService(GoRuntime runtime, ChannelService channels, ApiProperties properties, ApiMetrics metrics,
            WorkloadParser workloads, WorkloadTemplates templates, Clock clock, ServiceBudget budget, Ports ports) {
        this.runtime = runtime;
        this.channels = channels;
        this.properties = properties;
        this.metrics = metrics;
        this.parser = new JobSpecParser(workloads, templates);
        this.clock = clock;
        this.budget = budget;
        this.memory = new JobMemory(budget.memory(), budget.sizes().maxJobBytes());
        for (int i = 0; i < levels.length; i++) {
            levels[i] = new ArrayDeque<>();
        }
        if (ports != null) {
            this.cluster = new ClusterJobs(runtime, channels, ports.directory(), properties, metrics, parser, clock, memory, ports.queue(),
                    ports.store(), ports.node(), shutdown);
            metrics.gauges(this::runningJobs, cluster::waiting, channels::size);
        } else {
            this.cluster = null;
            metrics.gauges(this::runningJobs, waiting::get, channels::size);
            budget.memory().addReclaimer(this::evictUnderPressure);
        }
    }

    /** The outcome of a submission: the job, and whether it was an Idempotency-Key replay. */
    public record Submitted(JobView job, boolean replayed) {}

    /** A page of jobs, newest first. */
    public record Page(List<JobView> items, int page, int size, long total) {}

    // ---------------------------------------------------------------- submission

    /**
     * Validates and admits a job. Errors: 422 (invalid, with JSON pointers), 409 (same
     * Idempotency-Key, other body), 429 (queue full), 503 (shutting down).
     */
    public Submitted submit(JsonNode body, String idempotencyKey) {
        if (shuttingDown) {
            throw ApiProblem.shuttingDown();
        }
        String hash = null;
        if (idempotencyKey != null) {
            if (idempotencyKey.isEmpty() || idempotencyKey.length() > 255 || !idempotencyKey.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw ApiProblem.invalid("", "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
            }
            hash = sha256(body.toString());
        }
        if (cluster != null) {
            return cluster.submit(body, idempotencyKey, hash);
        }
        if (idempotencyKey != null) {
            Job prior = byIdempotencyKey.get(idempotencyKey);
            if (prior != null) {
                return replay(prior, hash, idempotencyKey);
            }
        }
        Instant now = clock.instant();
        JobSpec spec = parser.parse(body, now);
        checkChannels(spec.workload());
        if (spec.workload().goroutines() > properties.admission().maxLiveGoroutines()) {
            throw ApiProblem.invalid(spec.template() == null ? "/workload" : "/params", "would start " + spec.workload().goroutines()
                    + " goroutines, more than the service's limit of " + properties.admission().maxLiveGoroutines());
        }
        evict(now);
        JobMemory.Charge charge = memory.admit(spec, idempotencyKey, spec.template() == null ? "/workload" : "/params");
        try {
            admitOne();
        } catch (ApiProblem queueFull) {
            memory.abandon(charge);
            throw queueFull;
        }
        Job job = new Job(UUID.randomUUID().toString(), spec, idempotencyKey, hash, now, charge);
        if (idempotencyKey != null) {
            Job prior = byIdempotencyKey.putIfAbsent(idempotencyKey, job);
            if (prior != null) { // lost a race with the same key: nothing of ours started
                waiting.decrementAndGet();
                memory.abandon(charge);
                return replay(prior, hash, idempotencyKey);
            }
        }
        jobs.put(job.id, job);
        metrics.jobSubmitted();
        schedule(job, spec.notBefore() == null ? Duration.ZERO : Duration.between(now, spec.notBefore()));
        return new Submitted(job.view(), false);
    }

    private static Submitted replay(Job prior, String hash, String key) {
        if (!prior.bodyHash.equals(hash)) {
            throw ApiProblem.conflict("idempotency-conflict", "Idempotency-Key reused",
                    "the Idempotency-Key was already used with a different request body").with("jobId", prior.id);
        }
        return new Submitted(prior.view(), true);
    }

    /** Every channel the workload shares with HTTP clients must exist now. */
    private void checkChannels(Workload w) {
        List<Violation> missing = new ArrayList<>();
        w.sharedChannels().forEach((name, pointer) -> {
            if (channels.lookup(name) == null) {
                missing.add(new Violation(pointer, "unknown channel '" + name
                        + "': create it with POST /api/v1/channels or declare it in the workload's 'channels'"));
            }
        });
        if (!missing.isEmpty()) {
            throw ApiProblem.invalid(missing);
        }
    }

    /** Reserves one waiting slot or answers 429. */
    private void admitOne() {
        if (waiting.incrementAndGet() > properties.admission().maxQueuedJobs()) {
            waiting.decrementAndGet();
            throw ApiProblem.overloaded("the queue holds " + properties.admission().maxQueuedJobs()
                    + " waiting jobs, its limit", properties.admission().retryAfter());
        }
    }

    /**
     * Puts the job in the ready queue now, or after {@code delay} on the runtime's timers. The
     * timer is made inside a goroutine: timers belong to Ps, and a Reactor thread has none.
     */
    private void schedule(Job job, Duration delay) {
        if (delay.isNegative() || delay.isZero()) {
            ready(job);
            return;
        }
        runtime.go(() -> {
            job.delay(Time.afterFunc(delay, () -> ready(job)));
            if (job.state() != JobState.QUEUED) {
                job.stopDelay(); // cancelled before its timer existed
            }
        });
    }

    private void ready(Job job) {
        synchronized (queueLock) {
            job.seq = nextSeq++;
            levels[job.spec.priority()].addLast(job);
        }
        dispatch();
    }

    /** Starts queued jobs while running slots and goroutine budget allow. Can be called by any thread. */
    private void dispatch() {
        List<Job> start = null;
        synchronized (queueLock) {
            for (int level = JobSpec.MAX_PRIORITY; level >= 0 && running < properties.admission().maxRunningJobs(); ) {
                Job j = levels[level].peekFirst();
                if (j == null) {
                    level--;
                    continue;
                }
                if (j.state() != JobState.QUEUED) {
                    levels[level].pollFirst(); // cancelled while queued
                    continue;
                }
                long g = j.spec.workload().goroutines();
                if (running > 0 && reserved + g > properties.admission().maxLiveGoroutines()) {
                    break; // the head waits for its reservation; nobody overtakes it
                }
                if (!startCharged(j)) {
                    break; // the head waits for budget room too; a release dispatches again
                }
                levels[level].pollFirst();
                if (!j.transition(JobState.QUEUED, JobState.RUNNING, clock.instant())) {
                    continue; // cancelled between the check and here
                }
                waiting.decrementAndGet();
                running++;
                live++;
                reserved += g;
                if (start == null) {
                    start = new ArrayList<>();
                }
                start.add(j);
            }
        }
        if (start != null) {
            start.forEach(this::start);
        }
    }

    /**
     * Charges a queued job's run to the budget; on failure arms one dispatch for the next
     * release and tries once more, so a release in between is not missed. When nothing runs the
     * head starts anyway, as it does past the goroutine reservation: else a budget full of
     * waiting requests would keep every job waiting for ever. queueLock must be held.
     */
    private boolean startCharged(Job j) {
        assert Thread.holdsLock(queueLock);
        if (memory.tryStart(j.charge)) {
            return true;
        }
        if (running == 0) {
            memory.forceStart(j.charge);
            return true;
        }
        if (dispatchOnFree.compareAndSet(false, true)) {
            budget.memory().whenFreed(() -> {
                dispatchOnFree.set(false);
                try {
                    runtime.go(this::dispatch); // not on the releasing thread: it may hold a channel's or the retention lock
                } catch (RuntimeException shuttingDown) {
                    // the runtime is closing: nothing more starts
                }
            });
        }
        return memory.tryStart(j.charge);
    }

    /** Starts the attempt's main goroutine, which makes the run's context, channels and steps. */
    private void start(Job job) {
        try {
            // Every goroutine of the job carries job=<id> (and its template): dumps, leaks, traces.
            runtime.go(() -> io.gosched.runtime.Go.withLabels(job.spec.template() == null ? java.util.Map.of("job", job.id)
                    : java.util.Map.of("job", job.id, "template", job.spec.template()), () -> run(job)));
        } catch (RuntimeException refused) { // the runtime is shutting down
            job.fail(new Run.Failure("", "the runtime refused the job: " + refused.getMessage()));
            memory.finish(job.charge, job.lastReceived(), job.error());
            endAttempt();
            Instant now = clock.instant();
            Instant started = job.startedAt();
            // Meters first: whoever sees the final state must find it counted.
            metrics.jobFinished(JobState.FAILED.json(), started == null ? Duration.ZERO : Duration.between(started, now));
            job.transition(JobState.RUNNING, JobState.FAILED, now);
            retire(job, now);
            release(job);
        }
    }

    /** The main goroutine of one attempt. Runs in a goroutine of the service's runtime. */
    private void run(Job job) {
        Run run = Attempt.start(job.spec, channels, name -> "channel '" + name + "' was deleted before the job started");
        job.attach(run);
        if (run.failure() == null) {
            interpreter.run(job.spec.workload(), run);
        }
        finish(job, run);
    }

    private void endAttempt() {
        synchronized (queueLock) {
            live--;
        }
    }

    private void release(Job job) {
        synchronized (queueLock) {
            running--;
            reserved -= job.spec.workload().goroutines();
        }
    }

    /** Ends an attempt: decides its outcome, retries or retires the job, frees its reservation. */
    private void finish(Job job, Run run) {
        RuntimeException err = run.context().err(); // read before our own cancel below
        JobState outcome = Attempt.outcome(run, job.cancelRequested(), err);
        if (outcome == JobState.TIMED_OUT) {
            run.fail(new Run.Failure("", "the job ran past its timeout of " + job.spec.timeoutMs() + " ms"));
        }
        run.context().cancel(); // releases the deadline timer
        job.record(run, outcome == JobState.TIMED_OUT);
        endAttempt();
        Instant now = clock.instant();
        boolean retry = (outcome == JobState.FAILED || outcome == JobState.TIMED_OUT) && !shuttingDown && job.attemptsLeft();
        if (retry) {
            memory.requeue(job.charge, job.lastReceived(), job.error());
            release(job);
            // An automatic retry is not a new submission: it bypasses the queue cap so that an
            // accepted job is never dropped between attempts.
            waiting.incrementAndGet();
            job.transition(JobState.RUNNING, JobState.QUEUED, now);
            schedule(job, Duration.ofMillis(job.spec.retry().backoffBefore(job.attempt() + 1)));
        } else {
            memory.finish(job.charge, job.lastReceived(), job.error());
            Instant started = job.startedAt();
            // Meters first: whoever sees the final state must find it counted.
            metrics.jobFinished(outcome.json(), started == null ? Duration.ZERO : Duration.between(started, now));
            job.transition(JobState.RUNNING, outcome, now);
            retire(job, now);
            release(job);
        }
        dispatch();
    }

    // ---------------------------------------------------------------- reads

    public JobView get(String id) {
        if (cluster != null) {
            return cluster.get(id);
        }
        evict(clock.instant()); // an expired job is gone even if nothing else happened since
        return find(id).view();
    }

    public Page list(JobState state, int page, int size) {
        if (cluster != null) {
            return cluster.list(state, page, size);
        }
        evict(clock.instant());
        List<JobView> all = jobs.values().stream().map(Job::view).filter(v -> state == null || v.state() == state)
                .sorted(Comparator.comparing(JobView::submittedAt).reversed().thenComparing(JobView::id)).toList();
        int from = (int) Math.min((long) page * size, all.size());
        return new Page(all.subList(from, Math.min(from + size, all.size())), page, size, all.size());
    }

    /** Jobs held in memory now, finished ones included: what retention bounds. */
    public int size() {
        return cluster != null ? cluster.size() : jobs.size();
    }

    public int idempotencyKeys() {
        return byIdempotencyKey.size();
    }

    public int runningJobs() {
        if (cluster != null) {
            return cluster.runningHere();
        }
        synchronized (queueLock) {
            return live;
        }
    }

    public int waitingJobs() {
        return cluster != null ? (int) Math.min(Integer.MAX_VALUE, cluster.waiting()) : waiting.get();
    }

    /**
     * SSE of the job: an event {@code state} on every state change, {@code progress} when its
     * counters move; ends after the final state, or when the application starts closing (open
     * streams would otherwise hold graceful shutdown for its whole timeout). Counts against
     * {@code max-open-streams}: 429 beyond it.
     */
    public Flux<ServerSentEvent<JobView>> events(String id) {
        if (cluster != null) {
            return budget.streams().guard(Flux.defer(() -> cluster.events(id)));
        }
        Job job = find(id);
        return budget.streams().guard(Flux.defer(() -> {
            AtomicReference<JobView> last = new AtomicReference<>();
            AtomicInteger seq = new AtomicInteger();
            return Flux.interval(Duration.ZERO, Duration.ofMillis(100))
                    .onBackpressureDrop()
                    .map(i -> job.view())
                    .filter(v -> {
                        JobView prev = last.get();
                        return prev == null || prev.state() != v.state() || !prev.counters().equals(v.counters())
                                || prev.attempt() != v.attempt();
                    })
                    .takeUntil(v -> v.state().isFinal())
                    .takeUntilOther(shutdown.asMono())
                    .map(v -> {
                        JobView prev = last.getAndSet(v);
                        String event = prev == null || prev.state() != v.state() || prev.attempt() != v.attempt() ? "state" : "progress";
                        return ServerSentEvent.builder(v).id(Integer.toString(seq.incrementAndGet())).event(event).build();
                    });
        }));
    }

    // ---------------------------------------------------------------- control

    /** The answer of DELETE: the view, and whether the job is already cancelled (true) or will be shortly (false). */
    public record Cancelled(JobView job, boolean done) {}

    /** DELETE: a queued job is cancelled at once; a running one is asked through its context. 409 if final. */
    public Cancelled cancel(String id) {
        if (cluster != null) {
            return cluster.cancel(id);
        }
        Job job = find(id);
        Instant now = clock.instant();
        if (job.transition(JobState.QUEUED, JobState.CANCELLED, now)) {
            waiting.decrementAndGet();
            memory.finish(job.charge, job.lastReceived(), job.error());
            job.stopDelay();
            retire(job, now);
            metrics.jobFinished(JobState.CANCELLED.json(), Duration.ZERO);
            dispatch();
            return new Cancelled(job.view(), true);
        }
        if (job.requestCancel()) {
            return new Cancelled(job.view(), false);
        }
        JobView v = job.view();
        if (v.state() == JobState.QUEUED || v.state() == JobState.RUNNING) {
            // it moved between our two looks (dispatched, or requeued for a retry): look again
            return cancel(id);
        }
        throw ApiProblem.conflict("job-finished", "Job already finished", "job '" + id + "' already finished as " + v.state().json())
                .with("state", v.state().json());
    }

    /** POST .../retry: a failed, cancelled or timed-out job runs again with a fresh attempt budget. */
    public JobView retry(String id) {
        if (shuttingDown) {
            throw ApiProblem.shuttingDown();
        }
        if (cluster != null) {
            return cluster.retry(id);
        }
        Job job = find(id);
        JobState s = job.state();
        if (!s.isFinal() || s == JobState.SUCCEEDED) {
            throw ApiProblem.conflict("job-not-retryable", "Job cannot be retried",
                    "only a failed, cancelled or timed-out job can be retried; this one is " + s.json()).with("state", s.json());
        }
        checkChannels(job.spec.workload());
        admitOne();
        if (!job.transition(s, JobState.QUEUED, clock.instant())) {
            waiting.decrementAndGet();
            throw ApiProblem.conflict("job-busy", "Job changing state", "job '" + id + "' changed state; try again");
        }
        memory.reopen(job.charge);
        job.resetAttemptBudget();
        schedule(job, Duration.ZERO);
        return job.view();
    }

    /** First step of shutdown: refuse new work (503) and end every SSE stream. */
    public void beginShutdown() {
        shuttingDown = true;
        shutdown.tryEmitEmpty();
    }

    public boolean isShuttingDown() {
        return shuttingDown;
    }

    /**
     * Cancels every queued and running job and waits up to {@code grace} for the running ones to
     * end. Blocks the calling (lifecycle) thread; never call it from a Reactor thread.
     *
     * @return true if no job is running any more
     */
    public boolean cancelAll(Duration grace) throws InterruptedException {
        beginShutdown();
        if (cluster != null) {
            // Cluster mode: the jobs are not cancelled, they move. Their leases go back to the queue.
            try {
                return cluster.handBack(grace);
            } finally {
                cluster.close();
            }
        }
        for (Job job : jobs.values()) {
            JobState s = job.state();
            if (s == JobState.QUEUED || s == JobState.RUNNING) {
                try {
                    cancel(job.id);
                } catch (ApiProblem raced) {
                    // it finished or moved meanwhile: fine, it is not running for long either way
                }
            }
        }
        long end = System.nanoTime() + grace.toNanos();
        while (runningJobs() > 0 && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        return runningJobs() == 0;
    }

    // ---------------------------------------------------------------- retention

    private void retire(Job job, Instant now) {
        retired.add(new Retired(job, job.generation(), now));
        retiredCount.incrementAndGet();
        evict(now);
    }

    /** Drops the oldest finished jobs beyond the count bound or past the age bound, with their keys. */
    private void evict(Instant now) {
        int max = properties.retention().maxFinishedJobs();
        Instant oldest = now.minus(properties.retention().maxAge());
        int byCount = 0;
        int byAge = 0;
        synchronized (retired) {
            Retired head;
            while ((head = retired.peek()) != null && (retiredCount.get() > max || head.finishedAt().isBefore(oldest))) {
                boolean overCount = retiredCount.get() > max;
                retired.poll();
                retiredCount.decrementAndGet();
                if (drop(head) >= 0) {
                    if (overCount) {
                        byCount++;
                    } else {
                        byAge++;
                    }
                }
            }
        }
        metrics.jobsEvicted("count", byCount);
        metrics.jobsEvicted("age", byAge);
    }

    /**
     * The memory budget's reclaimer: drops finished jobs, oldest first, until {@code wanted}
     * bytes came back or none is left. Can be called by any thread that charges the budget.
     */
    private long evictUnderPressure(long wanted) {
        long freed = 0;
        int n = 0;
        synchronized (retired) {
            Retired head;
            while (freed < wanted && (head = retired.poll()) != null) {
                retiredCount.decrementAndGet();
                long bytes = drop(head);
                if (bytes >= 0) {
                    freed += bytes;
                    n++;
                }
            }
        }
        metrics.jobsEvicted("pressure", n);
        return freed;
    }

    /**
     * Removes a retired job from the store with its key and returns the budget bytes it held, or
     * -1 if the entry is stale (the job was retried since). The retention lock must be held.
     */
    private long drop(Retired head) {
        assert Thread.holdsLock(retired);
        Job j = head.job();
        if (j.generation() != head.generation() || !j.state().isFinal()) {
            return -1;
        }
        jobs.remove(j.id, j);
        if (j.idempotencyKey != null) {
            byIdempotencyKey.remove(j.idempotencyKey, j);
        }
        return memory.evict(j.charge);
    }

    private Job find(String id) {
        Job job = id == null ? null : jobs.get(id);
        if (job == null) {
            throw ApiProblem.notFound("job", id == null || id.length() > 64 ? "?" : id);
        }
        return job;
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
