package io.gosched.service.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.OptionalInt;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.BackendException;
import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.workload.Interpreter;
import io.gosched.service.workload.Run;
import io.gosched.service.workload.Step;
import io.gosched.service.error.Violation;
import io.gosched.service.workload.Workload;
import io.gosched.runtime.Chan;
import io.gosched.runtime.GoRuntime;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import tools.jackson.databind.JsonNode;

/**
 * The one job engine: the protocol of {@link io.gosched.service.job.spi} run word for word over the
 * ports ({@link JobQueue}, {@link JobStore}), whichever implements them. {@link JobService} runs it
 * over the in-memory ports in embedded mode ({@code local}: the queue and the store live in this
 * process) and over a cluster's shared ones (NATS JetStream) otherwise. The record in the store is
 * the truth; this node holds only the jobs it runs.
 *
 * <h2>Where embedded and cluster mode differ</h2>
 * Only where a shared store cannot do what this process's memory does:
 * <ul>
 * <li>shutdown cancels the jobs in embedded mode (they live and die with the process) and hands
 *     them back to the queue in cluster mode (another node runs them next);</li>
 * <li>the in-memory store charges its records to the memory budget and keeps the retention bounds
 *     itself, as they finish; a shared store is bounded by its own limits, and its retention runs
 *     on the cluster's leader;</li>
 * <li>a view names the node that runs the job only in cluster mode.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * <ul>
 * <li>the dispatcher ({@code gosched-job-dispatch}, a platform thread) pulls only as many tickets
 *     as this node has free running slots, claims each with a CAS and starts it as goroutines. A
 *     pulled job that does not fit the free goroutine reservation or the memory budget waits on
 *     this node under its (renewed) lease, still {@code queued}: the CAS to {@code running} comes
 *     when it starts. The head waits rather than being overtaken, so priority order holds
 *     strictly; nothing more is pulled meanwhile, so other nodes take the rest. In embedded mode
 *     (a queue that answers {@link JobQueue#poll} without blocking) a finishing attempt refills
 *     its slot itself, on its goroutine ({@link #ended}); the dispatcher pulls when the queue ran
 *     dry and starts what a goroutine cannot;</li>
 * <li>finishers (a virtual thread per finish in cluster mode, two platform threads in embedded
 *     mode) write an attempt's outcome with a fenced CAS and ack, retrying
 *     while the store cannot be reached: goroutines never block on the network. In embedded mode
 *     the attempt's main goroutine writes its outcome itself (the in-memory ports answer at once,
 *     under short locks); a finisher still ends an attempt whose main goroutine died;</li>
 * <li>the chores thread publishes progress of local runs, settles claims whose CAS got no answer
 *     ({@link #settleClaims}) and, on the leader, runs retention.</li>
 * </ul>
 *
 * <h2>Memory</h2>
 * Cluster mode: the budget charges what this node holds, a job's request, goroutine stacks and own
 * channels from its pull until its attempt ends. Queued and finished jobs live in the store,
 * bounded by {@code gosched.cluster.max-queue-bytes} / {@code max-store-bytes} (429 when full),
 * not here. Embedded mode: the in-memory store charges every record as it moves, so the engine
 * charges only what a run adds ({@link JobMemory#admitRun}).
 */
final class JobEngine {

    private static final Log log = LogFactory.getLog(JobEngine.class);
    /** How long one pull waits for a ticket before the dispatcher looks at its room again. */
    private static final Duration PULL_WAIT = Duration.ofMillis(500);
    private static final long PROGRESS_EVERY_MS = 250;
    /** Embedded mode: progress costs a callback, not a message; SSE shows counters as often as it did when it polled. */
    private static final long LOCAL_PROGRESS_EVERY_MS = 100;
    /** Live progress of a job not heard of for this long is checked against its record (it may have ended meanwhile). */
    private static final long PROGRESS_STALE_NANOS = Duration.ofSeconds(30).toNanos();
    private static final long RETENTION_EVERY_MS = 5_000;
    private static final Duration RETRY_WRITE = Duration.ofMillis(500);
    /** How often claims that got no answer are read again (see {@link #unsettled}). */
    private static final long SETTLE_EVERY_MS = 500;
    /** How long a pulled ticket of a manual retry waits for the retry's CAS to land before it counts as stale. */
    private static final Duration RETRY_IN_FLIGHT = Duration.ofSeconds(2);
    /**
     * When a pulled ticket's record reads as absent in a cluster, how long the ticket waits before it
     * is read again: a replica catching up applies a creation within milliseconds, a failover within
     * a second or two, and each wait spends one of the ticket's max-deliver deliveries.
     */
    private static final Duration ABSENT_RECORD_RECHECK = Duration.ofMillis(500);

    private final GoRuntime runtime;
    private final ChannelRegistry channels;
    private final ChannelDirectory directory;
    private final ServiceProperties properties;
    private final ServiceMetrics metrics;
    private final JobSpecs specs;
    private final Interpreter interpreter = new Interpreter();
    private final Clock clock;
    private final JobMemory memory;
    private final JobQueue queue;
    private final JobStore store;
    private final JobNode node;
    /** The store lives in this process (the in-memory one): no other node reads or writes its records. */
    private final boolean local;
    /** Cluster mode: the latest progress of attempts running on other nodes, by job id. */
    private final ConcurrentHashMap<String, Live> progress = new ConcurrentHashMap<>();
    private final AutoCloseable progressFeed;

    private record Live(JobStore.Progress progress, long atNanos) {}

    /** Jobs this node runs now, by id. */
    private final ConcurrentHashMap<String, Local> held = new ConcurrentHashMap<>();
    private final Object slots = new Object();
    private int running; // guarded by slots: pulled jobs, started or waiting for room
    private long reserved; // guarded by slots: goroutines reserved by started jobs
    /**
     * Guarded by slots: slots promised to a pull or poll under way (its room), then the leases it
     * got until each is a {@link Local} (in {@code running}) or dropped. {@link #room} counts them
     * as taken, so that a pull and a poll of this node together never take more than the free slots.
     */
    private int pulled;
    /** Guarded by slots: the room of the dispatcher's pull while it waits for tickets (part of {@link #pulled}), 0 otherwise. */
    private int pullRoom;
    /**
     * Guarded by slots: a pull or poll holds the order, from its take to the last of its tickets
     * queued up in {@link #waitingForRoom} (or {@link #handedOver}): one at a time, so that the
     * order there is the order the queue handed the tickets out in.
     */
    private boolean pulling;
    /** Pulled, not claimed yet: waiting for goroutine reservation and memory, in pull order. Guarded by slots. */
    private final ArrayDeque<Local> waitingForRoom = new ArrayDeque<>();
    /**
     * Leases polled in place whose claim must wait (a manual retry's CAS in flight), with the ones
     * polled after them, in pull order: the dispatcher claims them before it pulls again. Their
     * slots count in {@link #pulled}. Guarded by slots.
     */
    private final ArrayDeque<JobLease> handedOver = new ArrayDeque<>();
    /**
     * Claims whose CAS got no answer (the store went away mid-write), by job id: the CAS may have
     * landed, leaving the record {@code running} on this node under a ticket this node handed
     * back. Nobody else repairs such a record: a server restart can forget that the ticket was
     * ever delivered, and the node that gets it next as a first delivery takes it for a duplicate
     * of a run in progress (see {@link #unclaimable}) and drops it. {@link #settleClaims} reads
     * each again once the store answers and puts a landed one back in the queue. Also holds the
     * orphans the sweep requeued whose ticket the queue refused ({@link #requeueOrphan}). Bounded
     * by the running slots (an unanswered claim stands for a lease pulled into one) plus those
     * orphans.
     */
    private final ConcurrentHashMap<String, Unsettled> unsettled = new ConcurrentHashMap<>();

    /**
     * A claim in {@link #unsettled}; {@code requeued} once its record is back to queued under
     * {@code ticket.next}; {@code clearSince} (System.nanoTime, or {@link #NOT_CLEAR}) since when
     * the record has read as nothing to settle.
     */
    private record Unsettled(JobTicket ticket, boolean requeued, long clearSince) {}

    private static final long NOT_CLEAR = Long.MIN_VALUE;
    /**
     * How long a claim that read as not landed is still watched. The client keeps what it could
     * not send while the connection was down and sends it after the reconnect, so the CAS of a
     * claim that timed out may land after a first read found the record queued.
     */
    private static final long SETTLE_GRACE_NANOS = Duration.ofSeconds(10).toNanos();

    /**
     * Records the orphan sweep found {@code running} with nobody to run them, by job id, as first
     * seen so. Touched only by the chores thread.
     */
    private final Map<String, Orphan> orphans = new HashMap<>();

    /** A running record as the sweep saw it first: a change of node, ticket or attempt is a new sighting. */
    private record Orphan(String node, long ticket, int attempt, long sinceNanos) {}

    /**
     * How many lease times a record must stay orphaned, with no ticket of its job in the queue,
     * before the sweep requeues it: a margin for what is in flight between the store and the
     * queue when the sweep reads them (a takeover's CAS, a retry's publish).
     */
    private static final int ORPHAN_LEASES = 2;
    /**
     * The queue answers {@link JobQueue#poll} without blocking (embedded mode): a finishing
     * attempt refills its slot itself, on its own goroutine, and the dispatcher is woken only
     * when that cannot be done there. Cluster mode (a pull over the network): every refill is the
     * dispatcher's.
     */
    private final boolean inPlace;
    /**
     * The fewest free slots a finishing attempt polls for: an eighth of max-running-jobs, at least
     * one. Polling one ticket per finished job took the queue's and the slots' locks once per
     * job, against the submitting thread, and a loaded machine that deschedules a lock's holder
     * stalls whoever waits for it (JFR: bench/results/NOTES.md); a batch takes them once per batch.
     */
    private final int inPlaceBatch;
    /** How often the dispatcher looks for free slots fewer than a batch while jobs run (embedded mode). */
    private static final long IN_PLACE_LOOK_MS = 10;
    /** Tickets polled in place by finishing attempts; tickets pulled by the dispatcher; wake-ups of the dispatcher by finishing attempts. */
    private final java.util.concurrent.atomic.LongAdder polledInPlace = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder pulledByDispatcher = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder dispatcherWakeups = new java.util.concurrent.atomic.LongAdder();

    /** This node's shutdown state: the engine stops taking work at STOPPING, its threads end at CLOSED. */
    private final ServiceShutdown shutdown;
    private final Thread dispatcher;
    private final ExecutorService finishers;
    /** Cluster mode: the reads and claims of a pulled batch, side by side, a virtual thread each (readTogether, claimAndStartTogether); null in embedded mode. */
    private final ExecutorService batchCalls;
    private final ScheduledExecutorService chores;
    private final AutoCloseable changes;

    /** One job this node pulled: waiting for room (not claimed yet), or claimed and running. */
    private final class Local {
        final String id;
        final JobSpec spec;
        final JobRecord.Spec recordSpec;
        /** The attempt this node runs; 0 until the claim's CAS. */
        volatile int attempt;
        final long ticket;
        volatile JobLease lease;
        final JobMemory.Charge charge;
        /** The labels every goroutine of the attempt carries: job=<id> and its template. */
        final Map<String, String> labels;
        volatile Run run;
        /** The goroutine that runs {@link JobEngine#run(Local)}; 0 until it starts. */
        volatile long rootGoid;
        /** The first exception that escaped one of the attempt's goroutines, as the job's error: it fails the attempt. */
        final AtomicReference<JobRecord.Failure> panic = new AtomicReference<>();
        volatile boolean cancelRequested;
        /**
         * A record asking to cancel arrived while {@link #attempt} was still 0: between the claim's
         * CAS in the store and this node's write of the attempt. Read by the claim once it has
         * set the attempt; see {@link #changed}.
         */
        volatile boolean cancelSeenUnclaimed;
        /** Shutdown or a takeover elsewhere: the attempt's outcome is not written, the lease is handed back or dropped. */
        volatile boolean abandoned;
        volatile boolean fenced;
        JobRecord.Counters lastPublished;

        /** Waiting for room, its record moved on (cancelled, taken elsewhere): dropped instead of claimed. */
        volatile boolean stale;
        /** Its goroutines count in {@code reserved}; guarded by slots. */
        boolean reserving;
        /** The record as this node last read (the pull) or wrote (the claim) it: where the next CAS starts. */
        volatile Versioned<JobRecord> read;

        Local(String id, JobSpec spec, JobRecord.Spec recordSpec, long ticket, JobLease lease, JobMemory.Charge charge) {
            this.id = id;
            this.spec = spec;
            this.recordSpec = recordSpec;
            this.ticket = ticket;
            this.lease = lease;
            this.charge = charge;
            this.labels = spec.template() == null ? Map.of("job", id) : Map.of("job", id, "template", spec.template());
        }

        void cancel() {
            Run r = run;
            if (r != null) {
                r.context().cancel();
            }
        }

        /** The store's record moved: a DELETE from any node, or another node took the job over. */
        void changed(JobRecord r) {
            if (r == null) {
                return; // removed: only retention removes, and only final records
            }
            JobRecord.Status s = r.status();
            if (attempt == 0 && s.cancelRequested()) {
                // The claim's CAS may have landed and the attempt not be written yet: a cancel
                // here would be dropped as "not claimed" and the job run to its end. Either the
                // claim reads this flag after writing the attempt, or the re-read below sees the
                // attempt (both volatile: one of the two sees the other's write).
                cancelSeenUnclaimed = true;
            }
            if (attempt == 0) { // not claimed yet
                if (JobEngine.stale(r, ticket)) {
                    stale = true;
                    synchronized (slots) {
                        slots.notifyAll(); // the dispatcher drops it: the next one may start
                    }
                }
                return;
            }
            boolean ours = s.state() == JobState.RUNNING && node.id().equals(s.node()) && s.attempt() == attempt;
            if (ours && s.cancelRequested() && !cancelRequested) {
                cancelRequested = true;
                cancel();
            } else if (!ours && (s.attempt() > attempt || s.ticket() != ticket)) {
                fenced = true; // a later attempt runs elsewhere: ours stops, its outcome is not ours to write
                cancel();
            }
        }
    }

    JobEngine(GoRuntime runtime, ChannelRegistry channels, ChannelDirectory directory, ServiceProperties properties, ServiceMetrics metrics,
            JobSpecs specs, Clock clock, JobMemory memory, JobQueue queue, JobStore store, JobNode node,
            ServiceShutdown shutdown) {
        this.runtime = runtime;
        this.channels = channels;
        this.directory = directory;
        this.properties = properties;
        this.metrics = metrics;
        this.specs = specs;
        this.clock = clock;
        this.memory = memory;
        this.queue = queue;
        this.store = store;
        this.node = node;
        this.local = !store.isShared();
        this.inPlace = queue.pollsWithoutBlocking();
        this.inPlaceBatch = Math.max(1, properties.admission().maxRunningJobs() / 8);
        this.shutdown = shutdown;
        queue.onLost(this::lost);
        this.changes = store.watchAll((id, r) -> {
            Local l = held.get(id);
            if (l != null) {
                l.changed(r);
            }
            if (!local && (r == null || r.status().state() != JobState.RUNNING)) {
                progress.remove(id);
            }
        });
        // Cluster mode: a read of a job another node runs answers its live counters (protocol: progress is best effort).
        this.progressFeed = local ? () -> { } : store.watchAllProgress(p -> {
            if (!held.containsKey(p.jobId())) { // this node's own runs are read directly
                progress.put(p.jobId(), new Live(p, System.nanoTime()));
            }
        });
        // Cluster mode: a finish is two round trips to NATS (the CAS, the ack), so finishes run side by side,
        // a virtual thread each; two platform threads bounded a node at 2 / (2 x the round trip), which
        // grows to milliseconds on a loaded machine (bench/results/NOTES.md, "cluster completions").
        // Embedded mode finishes on the attempt's goroutine; its finishers only end attempts whose
        // main goroutine died.
        this.finishers = local
                ? Executors.newFixedThreadPool(2, r -> Thread.ofPlatform().name("gosched-job-finisher", 0).daemon(true).unstarted(r))
                : Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("gosched-job-finisher-", 0).factory());
        this.batchCalls = local ? null : Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("gosched-job-batch-", 0).factory());
        this.chores = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name("gosched-job-chores").daemon(true).unstarted(r));
        long every = local ? LOCAL_PROGRESS_EVERY_MS : PROGRESS_EVERY_MS;
        chores.scheduleWithFixedDelay(this::publishProgress, every, every, TimeUnit.MILLISECONDS);
        if (!local) { // the in-memory store keeps its bounds as jobs finish
            chores.scheduleWithFixedDelay(this::retention, RETENTION_EVERY_MS, RETENTION_EVERY_MS, TimeUnit.MILLISECONDS);
            chores.scheduleWithFixedDelay(this::forgetStaleProgress, RETENTION_EVERY_MS, RETENTION_EVERY_MS, TimeUnit.MILLISECONDS);
            chores.scheduleWithFixedDelay(this::settleClaims, SETTLE_EVERY_MS, SETTLE_EVERY_MS, TimeUnit.MILLISECONDS);
            long sweep = Math.max(1000, queue.leaseTime().toMillis() / 2);
            chores.scheduleWithFixedDelay(this::sweepOrphans, sweep, sweep, TimeUnit.MILLISECONDS);
        }
        this.dispatcher = Thread.ofPlatform().name("gosched-job-dispatch").daemon(true).start(this::dispatchLoop);
    }

    String nodeId() {
        return node.id();
    }

    // ---------------------------------------------------------------- submission

    JobService.Submitted submit(JsonNode body, String idempotencyKey, String hash) {
        if (idempotencyKey != null) {
            Optional<Versioned<IdempotencyEntry>> prior = store.key(idempotencyKey);
            if (prior.isPresent()) {
                return replay(prior.get().value(), hash);
            }
        }
        Instant now = clock.instant();
        JobSpec spec = specs.parse(body, now);
        String pointer = spec.template() == null ? "/workload" : "/params";
        String pin = pin(spec.workload());
        if (spec.workload().goroutines() > properties.admission().maxLiveGoroutines()) {
            throw new InvalidRequestException(pointer, "would start " + spec.workload().goroutines()
                    + " goroutines, more than the service's limit of " + properties.admission().maxLiveGoroutines());
        }
        long requestBytes = memory.checkShare(spec, pointer);
        if (waiting() >= properties.admission().maxQueuedJobs()) {
            throw new RefusedException(RefusedException.Reason.OVERLOADED, (local ? "the queue holds " : "the cluster's queue holds ")
                    + properties.admission().maxQueuedJobs() + " or more waiting jobs, the limit (gosched.api.admission.max-queued-jobs)",
                    properties.admission().retryAfter());
        }
        String id = UUID.randomUUID().toString();
        Versioned<IdempotencyEntry> key = null;
        if (idempotencyKey != null) {
            Optional<Versioned<IdempotencyEntry>> prior = store.claimKey(idempotencyKey, new IdempotencyEntry(id, hash));
            if (prior.isPresent()) {
                return replay(prior.get().value(), hash); // another node won the key
            }
            key = store.key(idempotencyKey).orElse(null);
        }
        JobRecord record = new JobRecord(id, new JobRecord.Spec(body, spec.name(), spec.template(), spec.priority(),
                spec.retry().maxAttempts(), spec.timeoutMs(), spec.workload().goroutines(), now, spec.notBefore(), idempotencyKey, hash),
                JobRecord.Status.queued(now));
        if (local) {
            specs.remember(id, spec, requestBytes); // the in-memory store sizes the record from it
        }
        try {
            if (store.create(record).isEmpty()) {
                throw new IllegalStateException("job id " + id + " already exists");
            }
        } catch (RuntimeException e) {
            specs.forget(id);
            releaseKey(idempotencyKey, key);
            throw e;
        }
        try {
            queue.enqueue(new JobTicket(id, 1, spec.priority(), spec.notBefore(), pin));
        } catch (RuntimeException e) {
            // No ticket, no job: take the record back so that nothing waits for ever.
            specs.forget(id);
            store.get(id).ifPresent(v -> store.remove(id, v.revision()));
            releaseKey(idempotencyKey, key);
            throw e;
        }
        metrics.jobSubmitted();
        // a job just made has run no goroutine: no need to look through the runtime's leak reports
        return new JobService.Submitted(view(record, Map.<String, Integer>of()), false);
    }

    private void releaseKey(String idempotencyKey, Versioned<IdempotencyEntry> key) {
        if (key != null) {
            try {
                store.releaseKey(idempotencyKey, key.revision());
            } catch (RuntimeException e) {
                log.warn("Idempotency-Key of a job that was not stored could not be freed; retention frees it", e);
            }
        }
    }

    /** An Idempotency-Key replay: the job the key made, once its record is there (the winner may still be writing it). */
    private JobService.Submitted replay(IdempotencyEntry entry, String hash) {
        if (!entry.bodyHash().equals(hash)) {
            throw new ConflictException(ConflictException.Reason.IDEMPOTENCY_CONFLICT,
                    "the Idempotency-Key was already used with a different request body").with("jobId", entry.jobId());
        }
        long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (true) {
            Optional<Versioned<JobRecord>> r = store.get(entry.jobId());
            if (r.isPresent()) {
                return new JobService.Submitted(view(r.get().value()), true);
            }
            if (System.nanoTime() - end > 0) {
                throw new ConflictException(ConflictException.Reason.JOB_BUSY, "the job of this Idempotency-Key ('" + entry.jobId()
                        + "') is still being stored by another node; try again").with("jobId", entry.jobId());
            }
            sleep(Duration.ofMillis(20));
        }
    }

    /**
     * The node a job must run on: the home of its shared channels (the {@code Chan} exists only
     * there). 422 when the workload's channels live on different nodes: a run needs every one of
     * its channels in its own process, and a blocking select across homes could not be atomic.
     */
    private String pin(Workload w) {
        if (w.sharedChannels().isEmpty()) {
            return null;
        }
        Map<String, String> homes = new LinkedHashMap<>();
        List<Violation> missing = new ArrayList<>();
        w.sharedChannels().forEach((name, pointer) -> {
            String home = directory.home(name).map(ChannelHome::node).orElse(null);
            if (home == null && channels.lookup(name) != null) {
                home = node.id();
            }
            if (home == null) {
                missing.add(new Violation(pointer, "unknown channel '" + name
                        + "': create it with POST /api/v1/channels or declare it in the workload's 'channels'"));
            } else {
                homes.put(name, home);
            }
        });
        if (!missing.isEmpty()) {
            throw new InvalidRequestException(missing);
        }
        Set<String> distinct = new TreeSet<>(homes.values());
        if (distinct.size() == 1) {
            return distinct.iterator().next();
        }
        List<Violation> v = new ArrayList<>();
        for (Step.Select sel : blockingSelects(w.steps(), new ArrayList<>())) {
            Map<String, String> caseHomes = new LinkedHashMap<>();
            for (Step.Case c : sel.cases()) {
                if (homes.containsKey(c.channel())) {
                    caseHomes.put(c.channel(), homes.get(c.channel()));
                }
            }
            if (new TreeSet<>(caseHomes.values()).size() > 1) {
                v.add(new Violation(sel.pointer(), "a blocking select over channels that live on different nodes ("
                        + describe(caseHomes) + ") cannot be atomic across nodes: Go's select commits to one case with all its"
                        + " channels locked at once; keep the channels on one node (create them there) or add a default case"));
            }
        }
        if (v.isEmpty()) {
            v.add(new Violation("/workload", "the workload's shared channels live on different nodes (" + describe(homes)
                    + "); a job runs on its channels' home, so they must all live on one node"));
        }
        throw new InvalidRequestException(v);
    }

    private static String describe(Map<String, String> homes) {
        StringBuilder b = new StringBuilder();
        homes.forEach((name, home) -> b.append(b.isEmpty() ? "" : ", ").append('\'').append(name).append("' on ").append(home));
        return b.toString();
    }

    private static List<Step.Select> blockingSelects(List<Step> steps, List<Step.Select> out) {
        for (Step s : steps) {
            switch (s) {
                case Step.Select sel when !sel.hasDefault() -> out.add(sel);
                case Step.Spawn sp -> blockingSelects(sp.steps(), out);
                case Step.Loop l -> blockingSelects(l.steps(), out);
                default -> { }
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- dispatch

    /**
     * The dispatcher's loop; ends when the service closes. In embedded mode finishing attempts
     * refill their slots themselves ({@link #freed}): the dispatcher pulls when the queue ran dry
     * (a blocking pull waits for the next submission), starts what a goroutine could not (see
     * {@link #startWaiting}), and looks again every 200 ms for memory freed by anything else.
     */
    private void dispatchLoop() {
        while (open()) {
            try {
                startWaiting();
                claimHandedOver();
                int room;
                synchronized (slots) {
                    room = pulling ? 0 : room();
                    if (room == 0) {
                        // a finished attempt that could not refill its slot itself notifies; in embedded mode,
                        // free slots fewer than a batch are left to this look, every few milliseconds while jobs run
                        slots.wait(inPlace && running > 0 ? IN_PLACE_LOOK_MS : 200);
                        continue;
                    }
                    pulling = true;
                    pulled += room;
                    pullRoom = room;
                }
                take(room, false, Map.of(), null);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn("job dispatch: " + e.getMessage() + "; trying again shortly", e);
                sleep(Duration.ofMillis(500));
            }
        }
    }

    /**
     * Free running slots, or 0 while a claimed job waits for room or the goroutine reservation is
     * spent. Slots promised to a pull or poll under way are not free. Under slots.
     */
    private int room() {
        if (stopping() || !waitingForRoom.isEmpty() || !handedOver.isEmpty() || reserved >= properties.admission().maxLiveGoroutines()) {
            return 0;
        }
        return Math.max(0, properties.admission().maxRunningJobs() - running - pulled);
    }

    /**
     * Takes up to {@code room} tickets, promised in {@link #pulled}, with {@link #pulling} held:
     * a blocking pull on the dispatcher, a poll in place. Reads each one's record
     * ({@link #queueUp}), then, in one section under slots, gives the promise back, queues the
     * runnable ones up in {@link #waitingForRoom} in the order the queue handed them out (or
     * hands them over), releases the order, picks the waiting jobs that fit now and, in place,
     * promises the room left to the next poll. Outside the section, starts what it picked.
     *
     * @param here the labels of the calling goroutine (in place), or none
     * @return in place: the room promised to the next poll (0: none), or -1 if the dispatcher is needed now; on the dispatcher, 0
     */
    private int take(int room, boolean inPlace, Map<String, String> here, List<JobLease> given) throws InterruptedException {
        List<JobLease> got = null;
        List<Local> up = new ArrayList<>(Math.min(room, 8));
        int handFrom = -1;
        int next = 0;
        try {
            if (given != null) {
                got = given;
            } else {
                got = inPlace ? queue.poll(room) : queue.pull(room, PULL_WAIT);
                (inPlace ? polledInPlace : pulledByDispatcher).add(got.size());
            }
            Map<String, Object> records = !local && got.size() > 1 ? readTogether(got) : Map.of();
            for (int i = 0; i < got.size() && handFrom < 0; i++) {
                JobLease lease = got.get(i);
                if (stopping()) {
                    release(lease);
                    continue;
                }
                try {
                    Object l = queueUp(lease, inPlace, records.get(lease.ticket().jobId()));
                    if (l == HAND_OVER) {
                        handFrom = i; // this one must wait: it and the ones after it go to the dispatcher, in order
                    } else if (l != null) {
                        up.add((Local) l);
                    }
                } catch (RuntimeException e) {
                    log.warn("job " + lease.ticket().jobId() + ": claim failed (" + e.getMessage() + "); its ticket goes back", e);
                    release(lease);
                }
            }
        } finally {
            List<Local> start = new ArrayList<>(0);
            List<Local> dropped = new ArrayList<>(0);
            synchronized (slots) {
                pulled -= room;
                if (!inPlace) {
                    pullRoom = 0;
                }
                running += up.size();
                waitingForRoom.addAll(up);
                if (handFrom >= 0) {
                    handedOver.addAll(got.subList(handFrom, got.size()));
                    pulled += got.size() - handFrom;
                }
                pulling = false;
                boolean forDispatcher = pick(here, start, dropped);
                if (inPlace && got != null) {
                    if (forDispatcher || !handedOver.isEmpty()) {
                        next = -1;
                    } else if (room() >= inPlaceBatch) {
                        if (got.isEmpty()) {
                            next = -1; // nothing ready: the dispatcher waits in its pull for the next ticket
                        } else {
                            next = room();
                            pulling = true;
                            pulled += next;
                        }
                    }
                }
            }
            startPicked(start, dropped);
        }
        return next;
    }

    /** The dispatcher: claims the leases a poll in place handed over, in their order, before it pulls again. */
    private void claimHandedOver() throws InterruptedException {
        List<JobLease> leases;
        synchronized (slots) {
            if (handedOver.isEmpty() || pulling) {
                return;
            }
            leases = new ArrayList<>(handedOver);
            handedOver.clear();
            pulling = true; // their slots count in pulled already: take gives them back as it queues them up
        }
        take(leases.size(), false, Map.of(), leases);
    }

    /**
     * A finished attempt ended on this thread: its slot, goroutine reservation and memory go back.
     * Embedded mode: this thread refills the slot itself, without blocking (the queue answers a
     * poll under a short lock): it starts the jobs that waited for room, then polls and claims
     * the next tickets and starts them, on this very goroutine, the way the old in-memory service
     * started the next job on the thread that freed the slot. The dispatcher is woken only when
     * this cannot be done here: the queue had nothing ready (the dispatcher's blocking pull waits
     * for the next submission), a claim must wait, or the next job cannot be started with its own
     * labels from this goroutine. Cluster mode: the dispatcher pulls, as ever. One section under
     * slots ends the attempt, picks the waiting jobs that fit and promises the room to a poll.
     */
    private void ended(Local l) {
        held.remove(l.id, l);
        boolean wake = true;
        if (inPlace && !stopping()) {
            try {
                wake = refill(l);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // a poll does not wait: not from there
            } catch (RuntimeException e) {
                log.warn("job dispatch in place: " + e.getMessage() + "; the dispatcher takes over", e);
            }
        } else {
            synchronized (slots) {
                endLocked(l);
            }
        }
        if (wake) {
            dispatcherWakeups.increment();
            synchronized (slots) {
                slots.notifyAll();
            }
        }
    }

    /** Most polls one finishing attempt makes in a row (each may find stale tickets that free their slots again). */
    private static final int IN_PLACE_POLLS = 4;

    /** Ends {@code l} and refills in place while there is room; true if the dispatcher is needed now. */
    private boolean refill(Local l) throws InterruptedException {
        Map<String, String> here = io.gosched.runtime.Go.labels();
        List<Local> start = new ArrayList<>(0);
        List<Local> dropped = new ArrayList<>(0);
        int room;
        boolean forDispatcher;
        try {
            synchronized (slots) {
                endLocked(l);
                forDispatcher = pick(here, start, dropped) || !handedOver.isEmpty() && !pulling;
                // Another taker under way (pulling) looks at the room again once done, and sees this slot then.
                // No room: full; or the head waits for memory or goroutines, which the next finish frees and retries.
                room = forDispatcher || pulling ? 0 : room();
                if (room < inPlaceBatch) {
                    room = 0; // fewer free slots than a batch: the next finish, or the dispatcher's short look, takes them
                }
                if (room > 0) {
                    pulling = true;
                    pulled += room;
                }
            }
        } finally {
            startPicked(start, dropped);
        }
        if (forDispatcher) {
            return true;
        }
        for (int i = 0; room > 0; i++) {
            if (i == IN_PLACE_POLLS) {
                synchronized (slots) {
                    pulled -= room;
                    pulling = false;
                    return room() > 0;
                }
            }
            room = take(room, true, here, null);
        }
        return room < 0;
    }

    /**
     * Claim (protocol step 2), first half: reads the record and drops a stale ticket; a runnable
     * one is returned to wait on this node for room, its record still {@code queued}.
     * {@link #startPicked} moves it to {@code running} on this node with the CAS once it fits.
     *
     * @return the job to queue up; null if the lease was dropped (ended, or given back); {@link #HAND_OVER} in place if its
     *         claim must wait for a manual retry's CAS (the wait sleeps: not on a goroutine)
     */
    private static final Object HAND_OVER = new Object();

    /**
     * Cluster mode: the records of a pulled batch, read side by side (a virtual thread each), by
     * job id: each read is a round trip to NATS, and one after another on the dispatcher they were
     * its largest wait once the claims went out together (bench/results/NOTES.md, "cluster
     * completions": with both, one node's completions under a flood went from 260 to 1,307 a
     * second). A value is the
     * {@code Optional<Versioned<JobRecord>>} read, or the {@link BackendException} it failed with.
     */
    private Map<String, Object> readTogether(List<JobLease> leases) {
        Map<String, Future<Optional<Versioned<JobRecord>>>> reads = new LinkedHashMap<>();
        for (JobLease lease : leases) {
            String id = lease.ticket().jobId();
            reads.putIfAbsent(id, batchCalls.submit(() -> store.get(id)));
        }
        Map<String, Object> out = new java.util.HashMap<>();
        boolean interrupted = false;
        for (var e : reads.entrySet()) {
            while (true) {
                try {
                    out.put(e.getKey(), e.getValue().get());
                    break;
                } catch (InterruptedException ie) {
                    interrupted = true; // a read ends on its own (the request has a timeout): wait it out
                } catch (ExecutionException ee) {
                    if (ee.getCause() instanceof BackendException be) {
                        out.put(e.getKey(), be);
                    } // else: not read here; queueUp reads it itself
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    /** {@code read}: the record as {@link #readTogether} read it (or its failure), or null to read it here. */
    @SuppressWarnings("unchecked")
    private Object queueUp(JobLease lease, boolean inPlace, Object read) {
        JobTicket t = lease.ticket();
        Local mine = held.get(t.jobId());
        if (mine != null && mine.ticket == t.number()) {
            // our own lease lapsed (NATS was away) and came back to us: keep running under the new one
            JobLease old = mine.lease;
            mine.lease = lease;
            old.abandon();
            return null;
        }
        Optional<Versioned<JobRecord>> cur;
        try {
            // Embedded mode with the spec at hand: the status is all the claim reads, and the in-memory
            // store keeps the request it was created with whatever a CAS writes (never so in a cluster).
            if (read instanceof BackendException failed) {
                throw failed;
            }
            cur = read != null ? (Optional<Versioned<JobRecord>>) read
                    : specs.holds(t.jobId()) ? store.summary(t.jobId()) : store.get(t.jobId());
        } catch (BackendException e) {
            release(lease);
            return null;
        }
        if (cur.isPresent() && orphanedRetry(cur.get().value(), t)) {
            // the runner of ticket n died between its CAS to queued(n + 1) and the publish of n + 1:
            // publish it now (deduplicated by message id if it did go out), then drop ticket n
            JobRecord q = cur.get().value();
            try {
                queue.enqueue(t.next(q.status().queuedAt().plusMillis(specs.parse(q.spec())
                        .retry().backoffBefore(q.status().attempt() + 1))));
            } catch (BackendException e) {
                release(lease);
                return null;
            }
            complete(lease);
            return null;
        }
        if (inPlace && cur.isPresent() && retryInFlight(cur.get().value(), t)) {
            return HAND_OVER; // the wait below sleeps: not on a goroutine
        }
        long end = System.nanoTime() + RETRY_IN_FLIGHT.toNanos();
        while (cur.isPresent() && retryInFlight(cur.get().value(), t) && System.nanoTime() - end < 0) {
            // POST /retry publishes ticket n + 1 before its CAS moves the record to it: wait for the CAS
            // rather than drop the one ticket the job will have
            sleep(Duration.ofMillis(5));
            try {
                cur = store.get(t.jobId());
            } catch (BackendException e) {
                release(lease);
                return null;
            }
        }
        if (cur.isEmpty() && !local) {
            // A ticket is published only after its record was created, so in a cluster an absent
            // record is a read from a replica that has not applied the creation yet (KV reads are
            // direct gets, answered by any replica). Dropping the ticket would leave the job queued
            // for ever; it comes back after the recheck, and a record that never appears makes it a
            // dead letter after max-deliver deliveries, like any ticket nobody can finish.
            release(lease, ABSENT_RECORD_RECHECK);
            return null;
        }
        if (cur.isEmpty() || unclaimable(cur.get().value(), lease)) {
            specs.forget(t.jobId());
            complete(lease);
            return null;
        }
        JobRecord r = cur.get().value();
        JobSpec spec;
        try {
            JobSpec known = specs.take(r.id());
            spec = known != null ? known : specs.parse(r.spec());
        } catch (RuntimeException unparsable) {
            // a node with other limits accepted it: it can never run here, nor, with equal limits, anywhere
            Instant now = clock.instant();
            store.update(r.id(), x -> stale(x, t) ? null : x.withStatus(x.status().claimed(node.id(), now).finished(JobState.FAILED, now,
                    JobRecord.Counters.ZERO, null, new JobRecord.Failure(JobRecord.Failure.REFUSED, "", "node " + node.id()
                            + " cannot parse the job with its gosched.api.limits: " + unparsable.getMessage()))));
            complete(lease);
            return null;
        }
        // Embedded mode: the store charges the record's request already; this node adds only the run.
        Local l = new Local(t.jobId(), spec, r.spec(), t.number(), lease, local ? memory.admitRun(spec) : memory.admitClaimed(spec));
        l.read = cur.get();
        held.put(l.id, l);
        return l;
    }

    /**
     * True if the lease does not stand for a runnable attempt of the record: the ticket is stale,
     * or the record runs already and the lease is a first delivery (a duplicate: a running record
     * is taken over only from a lapsed lease).
     */
    private static boolean unclaimable(JobRecord r, JobLease lease) {
        return stale(r, lease.ticket()) || r.status().state() == JobState.RUNNING && lease.delivery() == 1;
    }

    /** True if the ticket is the one a manual retry of the (final) record published and has not moved the record to yet. */
    private static boolean retryInFlight(JobRecord r, JobTicket t) {
        return r.status().state().isFinal() && r.status().ticket() == t.number() - 1;
    }

    /** True if the record was requeued from this ticket as the next one (an automatic retry). */
    private static boolean orphanedRetry(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        // a manual retry publishes its ticket before its CAS and resets attemptBase to attempt: never orphaned
        return s.state() == JobState.QUEUED && s.ticket() == t.number() + 1 && s.attempt() > s.attemptBase();
    }

    /** True if the ticket no longer stands for a runnable attempt of the record. */
    private static boolean stale(JobRecord r, JobTicket t) {
        return stale(r, t.number());
    }

    static boolean stale(JobRecord r, long ticket) {
        JobRecord.Status s = r.status();
        return s.state().isFinal() || s.ticket() != ticket;
    }

    /**
     * Claim, second half: takes pulled jobs in pull order while their goroutine reservation and
     * memory fit, moves each to {@code running} on this node as its next attempt with a CAS, and
     * starts it. One whose record moved on meanwhile (cancelled, or taken by another node) is
     * dropped, wherever it waits. Runs on the dispatcher, and in place on a finishing attempt's
     * goroutine ({@code inPlace}); each waiting job is taken by one of them.
     *
     * <p>In place, a job is started from the finishing goroutine with {@link io.gosched.runtime.Go#withLabels},
     * which adds to that goroutine's labels and cannot take one away: a job without a template
     * after one with a template would inherit the other's {@code template} label. Such a job, the
     * head, is left to the dispatcher (a platform thread has no labels of its own).
     *
     * @return true if the head waits for the dispatcher to start it
     */
    private void startWaiting() {
        List<Local> start = new ArrayList<>();
        List<Local> dropped = new ArrayList<>();
        try {
            synchronized (slots) {
                pick(Map.of(), start, dropped);
            }
        } finally {
            startPicked(start, dropped);
        }
    }

    /**
     * Under slots: takes the stale jobs out of {@link #waitingForRoom} into {@code dropped}, then
     * the head while it fits into {@code start}, reserving its goroutines and memory.
     *
     * @param here the labels of the calling goroutine (none on a platform thread)
     * @return true if the head waits for the dispatcher to start it (its labels do not fit here)
     */
    private boolean pick(Map<String, String> here, List<Local> start, List<Local> dropped) {
        if (waitingForRoom.isEmpty()) {
            return false;
        }
        for (java.util.Iterator<Local> it = waitingForRoom.iterator(); it.hasNext(); ) {
            Local l = it.next();
            if (l.stale) {
                it.remove();
                dropped.add(l);
            }
        }
        Local l;
        while ((l = waitingForRoom.peekFirst()) != null) {
            if (!here.isEmpty() && !l.labels.keySet().containsAll(here.keySet())) {
                return true;
            }
            long g = l.spec.workload().goroutines();
            boolean alone = running - waitingForRoom.size() - dropped.size() == 0;
            if (!alone && reserved + g > properties.admission().maxLiveGoroutines()) {
                break;
            }
            if (!memory.tryStart(l.charge)) {
                if (!alone) {
                    break; // a finishing attempt frees memory and retries; the dispatcher looks again shortly
                }
                memory.forceStart(l.charge);
            }
            waitingForRoom.pollFirst();
            reserved += g;
            l.reserving = true;
            start.add(l);
        }
        return false;
    }

    /** Outside slots: drops what {@link #pick} found stale, claims (the CAS) and starts what it picked. */
    private void startPicked(List<Local> start, List<Local> dropped) {
        for (Local l : dropped) {
            drop(l);
        }
        if (!local && start.size() > 1) {
            claimAndStartTogether(start);
            return;
        }
        for (Local l : start) {
            claimAndStart(l);
        }
    }

    /**
     * Cluster mode: the claims of one batch go out together. Each is a CAS round trip to NATS, and
     * made one after another they were half of the dispatcher's time under a flood, which bounded
     * the node's completions (bench/results/NOTES.md, "cluster completions"). The claims are
     * independent (a record and a Local each), so each runs on a virtual thread of its own and the
     * dispatcher waits for the batch: the room the batch was pulled for stays accounted as before.
     */
    private void claimAndStartTogether(List<Local> start) {
        List<Future<?>> claims = new ArrayList<>(start.size());
        for (Local l : start) {
            claims.add(batchCalls.submit(() -> claimAndStart(l)));
        }
        boolean interrupted = false;
        for (Future<?> f : claims) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the claims end on their own (a CAS has a timeout): wait them out
                } catch (ExecutionException e) {
                    log.warn("a claim failed unexpectedly", e.getCause());
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The claim's CAS, then the job's main goroutine; a job whose claim fails is dropped. */
    private void claimAndStart(Local l) {
        if (!claimed(l)) {
            drop(l);
            return;
        }
        try {
            // Every goroutine of the job carries job=<id> (and its template): dumps, leaks, traces. The
            // main goroutine inherits them from this thread at its go call rather than setting them
            // itself, so that it keeps them for its whole life: the uncaught-exception policy runs after
            // the goroutine's body unwound and finds the job by them (goroutineFailed).
            io.gosched.runtime.Go.withLabels(l.labels, () -> runtime.go(() -> run(l)));
        } catch (RuntimeException refused) { // the runtime is closing: hand the job back
            l.abandoned = true;
            memory.finish(l.charge, null, null);
            memory.evict(l.charge);
            endLocal(l);
            release(l.lease);
        }
    }

    /**
     * A compare-and-set of {@code change} applied to {@code known}, the record as this node last
     * read or wrote it: one write when nobody wrote since (the common case), else the store's
     * read-and-retry loop. Saves the read the loop would start with.
     */
    private JobStore.Update casFrom(Versioned<JobRecord> known, UnaryOperator<JobRecord> change, String id) {
        if (known != null) {
            JobRecord next = change.apply(known.value());
            if (next == null) {
                return store.update(id, change); // declined on what we know: look at what stands now
            }
            Optional<Versioned<JobRecord>> w = store.replace(next, known.revision());
            if (w.isPresent()) {
                return new JobStore.Update(w.get(), true);
            }
        }
        return store.update(id, change);
    }

    /** The claim's CAS {@code queued -> running(this node, attempt + 1)}; false if the record moved on. */
    private boolean claimed(Local l) {
        Instant now = clock.instant();
        JobLease lease = l.lease;
        JobStore.Update u;
        try {
            u = casFrom(l.read, x -> unclaimable(x, lease) ? null : x.withStatus(x.status().claimed(node.id(), now)), l.id);
        } catch (RuntimeException e) {
            // NATS went away mid-claim: the CAS may have landed or not. Hand the ticket back; its next
            // delivery claims a queued record, or (above 1) takes a record left running by this claim
            // over. A restarted server may deliver it as a first delivery, which every node drops as
            // a duplicate of a run in progress: settleClaims looks again once the store answers.
            l.stale = true;
            l.abandoned = true;
            if (!local) {
                unsettled.put(l.id, new Unsettled(lease.ticket(), false, NOT_CLEAR));
            }
            release(lease);
            return false;
        }
        if (!u.applied()) {
            l.stale = true; // cancelled, or taken by another node, since the pull
            return false;
        }
        l.read = u.current(); // what the finish's CAS starts from
        JobRecord.Status s = u.current().value().status();
        if (s.attempt() > 1 && lease.delivery() > 1 && s.attempt() - 1 > s.attemptBase()) {
            log.info("job " + l.id + ": taken over by node " + node.id() + " as attempt " + s.attempt());
        }
        l.attempt = s.attempt();
        if (s.cancelRequested() || l.cancelSeenUnclaimed) {
            l.cancelRequested = true;
        }
        return true;
    }

    /** A pulled job that is not run here: its lease ends (unless handed back already), its charge and slot go back. */
    private void drop(Local l) {
        if (!l.abandoned) {
            complete(l.lease);
        }
        memory.finish(l.charge, null, null);
        memory.evict(l.charge);
        endLocal(l);
    }

    /** The main goroutine of one attempt. */
    private void run(Local l) {
        l.rootGoid = io.gosched.runtime.Go.goid();
        Run run = Attempt.start(l.spec, channels, name -> "channel '" + name + "' does not exist on node " + node.id()
                + ", where the job runs (deleted before the job started)");
        l.run = run;
        if (l.cancelRequested || l.fenced || l.abandoned) {
            run.context().cancel();
        }
        if (run.failure() == null) {
            interpreter.run(l.spec.workload(), run);
        }
        RuntimeException err = run.context().err();
        run.context().cancel(); // releases the deadline timer
        if (local) {
            // The in-memory store and queue never touch the network: the outcome is written from here,
            // without a hand-off to a finisher thread and its wake-up per job.
            finish(l, run, err);
        } else {
            finishers.execute(() -> finish(l, run, err));
        }
    }

    /**
     * Finish (protocol steps 3 to 5): the outcome goes in with a CAS fenced on this node and
     * attempt, then the lease is completed. Retried while the store cannot be reached; a runner
     * whose attempt was taken over drops its outcome and its lease.
     */
    private void finish(Local l, Run run, RuntimeException err) {
        // A goroutine's escaped exception comes first: it is why the attempt's context was cancelled.
        JobRecord.Failure panic = l.panic.get();
        JobState outcome = panic != null || run == null ? JobState.FAILED : Attempt.outcome(run, l.cancelRequested, err);
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
            if (l.abandoned) {
                return; // shutdown: the lease goes back, the job's next attempt runs elsewhere
            }
            boolean retry = (outcome == JobState.FAILED || outcome == JobState.TIMED_OUT) && !l.cancelRequested;
            while (true) {
                if (l.fenced) {
                    l.lease.abandon();
                    return;
                }
                try {
                    if (write(l, outcome, retry, counters, run == null ? null : run.lastReceived(), failure)) {
                        complete(l.lease);
                    } else {
                        l.lease.abandon(); // another node holds the job now
                    }
                    return;
                } catch (BackendException unreachable) {
                    if (!open()) {
                        l.lease.abandon();
                        return;
                    }
                    sleep(RETRY_WRITE); // the lease stays renewed; if it lapses meanwhile, the fence decides
                }
            }
        } catch (RuntimeException e) {
            log.error("job " + l.id + ": the outcome of attempt " + l.attempt + " could not be written; its lease lapses and the job"
                    + " runs again elsewhere", e);
            l.lease.abandon();
        } finally {
            memory.finish(l.charge, null, null);
            memory.evict(l.charge); // the finished record lives in the store, not on this node
            ended(l); // every way out: the slot is refilled, or the dispatcher told
        }
    }

    /** The fenced CAS of an attempt's outcome; false when the record names another attempt. */
    private boolean write(Local l, JobState outcome, boolean retry, JobRecord.Counters counters, JsonNode received,
            JobRecord.Failure failure) {
        Instant now = clock.instant();
        UnaryOperator<JobRecord> change = r -> {
            JobRecord.Status s = r.status();
            if (s.state() != JobState.RUNNING || !node.id().equals(s.node()) || s.attempt() != l.attempt || s.ticket() != l.ticket) {
                return null;
            }
            if (retry && s.attemptsLeft(r.spec().maxAttempts())) {
                return r.withStatus(s.requeued(now, counters, received, failure, false));
            }
            return r.withStatus(s.finished(outcome, now, counters, received, failure));
        };
        JobStore.Update u = casFrom(l.read, change, l.id);
        if (!u.applied()) {
            return false;
        }
        JobRecord.Status s = u.current().value().status();
        if (s.state() == JobState.QUEUED) {
            // The record names ticket n + 1 now: publish it until it is in (a retry is deduplicated by
            // message id). A crash before that is repaired by whoever gets ticket n again (orphanedRetry).
            Instant due = now.plusMillis(l.spec.retry().backoffBefore(s.attempt() + 1));
            while (true) {
                try {
                    queue.enqueue(l.lease.ticket().next(due));
                    break;
                } catch (BackendException unreachable) {
                    if (!open()) {
                        throw unreachable;
                    }
                    sleep(RETRY_WRITE);
                }
            }
        } else {
            Instant started = s.startedAt();
            metrics.jobFinished(s.state().json(), started == null ? Duration.ZERO : Duration.between(started, now));
        }
        return true;
    }

    /** The most goroutines whose traceback goes into that dump (a few hundred bytes each). */
    private static final int PANIC_DUMP_GOROUTINES = 512;

    /**
     * An exception escaped goroutine {@code goid} (called on it, by the runtime's policy). If its
     * labels name a job running here, the attempt fails as a cancel would end it: its context is
     * cancelled, so every other goroutine of the job ends, and the outcome is written through
     * {@link #finish} with the exception and the dump of the job's goroutines as taken now as its
     * error. If the dying goroutine is the attempt's main one, nothing else would finish the
     * attempt: it is finished from here.
     *
     * @return false if the goroutine is not one of a job running on this node (the caller logs it)
     */
    boolean goroutineFailed(long goid, Map<String, String> labels, Throwable e) {
        String id = labels.get("job");
        Local l = id == null ? null : held.get(id);
        if (l == null || l.attempt == 0) {
            return false; // not a job's, or its attempt ended already (a goroutine that outlived it)
        }
        log.warn("job " + id + ": goroutine " + goid + " " + labels + " ended by an uncaught exception; attempt " + l.attempt
                + " fails", e);
        if (l.panic.get() == null) {
            l.panic.compareAndSet(null, new JobRecord.Failure(JobRecord.Failure.PANIC, "", panicDetail(goid, labels, e, id)));
        }
        Run r = l.run;
        if (r != null) {
            r.context().cancel();
        }
        if (goid == l.rootGoid) {
            try {
                finishers.execute(() -> finish(l, r, r == null ? null : r.context().err()));
            } catch (RuntimeException closing) {
                log.debug("job " + id + ": finishers closed; the attempt is not written", closing);
            }
        }
        return true;
    }

    /** The goroutine, its exception (with its first frames) and the traceback of the job's goroutines, bounded. */
    private String panicDetail(long goid, Map<String, String> labels, Throwable e, String id) {
        StringBuilder b = new StringBuilder();
        b.append("goroutine ").append(goid).append(' ').append(labels).append(" ended by an uncaught exception: ").append(e).append('\n');
        StackTraceElement[] frames = e.getStackTrace();
        for (int i = 0; i < Math.min(frames.length, 16); i++) {
            b.append("\tat ").append(frames[i]).append('\n');
        }
        if (frames.length > 16) {
            b.append("\t... ").append(frames.length - 16).append(" more\n");
        }
        String dump;
        try {
            // A snapshot walks every goroutine of the runtime (no stop-the-world; docs/debugging.md has
            // its cost); only the first few hundred of the job's are printed: more would not fit the bound.
            List<io.gosched.runtime.GoroutineInfo> mine = runtime.goroutines().stream().filter(g -> id.equals(g.labels().get("job"))).toList();
            dump = GoRuntime.traceback(mine.subList(0, Math.min(mine.size(), PANIC_DUMP_GOROUTINES)));
            if (mine.size() > PANIC_DUMP_GOROUTINES) {
                dump += "... and " + (mine.size() - PANIC_DUMP_GOROUTINES) + " more goroutines of the job\n";
            }
        } catch (RuntimeException unavailable) {
            dump = "(no goroutine dump: " + unavailable + ")\n";
        }
        b.append("\nthe job's goroutines at the failure:\n\n").append(dump);
        if (b.length() > JobService.MAX_PANIC_DETAIL_CHARS) {
            int total = b.length();
            String tail = "\n... truncated: " + (JobService.MAX_PANIC_DETAIL_CHARS - 100) + " of " + total + " characters shown\n";
            b.setLength(JobService.MAX_PANIC_DETAIL_CHARS - 100);
            b.append(tail);
        }
        return b.toString();
    }

    private void endLocal(Local l) {
        held.remove(l.id, l);
        synchronized (slots) {
            endLocked(l);
        }
    }

    /** Under slots: {@code l} no longer holds its slot nor its goroutine reservation. */
    private void endLocked(Local l) {
        running--;
        if (!l.reserving) {
            waitingForRoom.remove(l); // only a job not started can wait there
        } else {
            l.reserving = false;
            reserved -= l.spec.workload().goroutines();
        }
    }

    private void complete(JobLease lease) {
        try {
            lease.complete();
        } catch (RuntimeException e) {
            log.debug("ack of " + lease + " failed; it comes back stale and is dropped then", e);
        }
    }

    private void release(JobLease lease) {
        release(lease, Duration.ZERO);
    }

    private void release(JobLease lease, Duration delay) {
        try {
            lease.release(delay);
        } catch (RuntimeException e) {
            log.debug("release of " + lease + " failed; it lapses after the ack wait instead", e);
        }
    }

    /** The dead letter (protocol step 7): the job fails as lost, unless its ticket is stale already. */
    private void lost(JobTicket t, int deliveries) {
        Instant now = clock.instant();
        specs.forget(t.jobId());
        JobStore.Update u = store.update(t.jobId(), r -> stale(r, t) ? null : r.lost(now, deliveries));
        if (u.applied()) {
            metrics.jobFinished(JobState.FAILED.json(), Duration.ZERO);
            log.warn("job " + t.jobId() + " lost: delivered " + deliveries + " times and no node finished it");
        }
    }

    // ---------------------------------------------------------------- chores

    /**
     * Settles the claims whose CAS got no answer ({@link #unsettled}). A record still
     * {@code running} on this node under the claim's ticket, and not held here, is a claim that
     * landed and never ran: it goes back to {@code queued} under the next ticket, its attempt not
     * counted (or to {@code cancelled} if a DELETE came meanwhile), and that ticket is published;
     * whatever is left of the old ticket turns stale. Any other record (queued: the CAS did not
     * land, yet; taken over; finished) needs nothing; such an entry is read again for
     * {@link #SETTLE_GRACE_NANOS}, in case the CAS lands late.
     */
    private void settleClaims() {
        for (Map.Entry<String, Unsettled> e : unsettled.entrySet()) {
            String id = e.getKey();
            Unsettled u = e.getValue();
            try {
                if (u.requeued()) {
                    queue.enqueue(u.ticket().next(clock.instant())); // deduplicated by message id when retried
                    unsettled.remove(id, u);
                } else if (putBack(id, r -> landedUnrun(r, u.ticket()), JobRecord.Status::unclaimed, r -> u.ticket(),
                        "unanswered-claim") instanceof JobRecord.Status back) {
                    if (back.state() == JobState.QUEUED) {
                        log.info("job " + id + ": the claim of ticket " + u.ticket().number() + " landed unseen and never ran;"
                                + " queued again as ticket " + back.ticket());
                    }
                    unsettled.remove(id, u); // its next ticket is out, or back in this map for the next round
                } else {
                    long read = System.nanoTime();
                    if (u.clearSince() == NOT_CLEAR) {
                        unsettled.replace(id, u, new Unsettled(u.ticket(), false, read));
                    } else if (read - u.clearSince() > SETTLE_GRACE_NANOS) {
                        unsettled.remove(id, u);
                    }
                }
            } catch (BackendException unreachable) {
                // still away: the next round tries again
            } catch (RuntimeException ex) {
                log.warn("job " + id + ": settling the claim of ticket " + u.ticket().number() + " failed; trying again", ex);
            }
        }
    }

    /**
     * The orphan sweep: finds the records left {@code running} with nobody to run them and no
     * ticket to bring them back, and puts them back in the queue. Such a record comes from a
     * server restarted after a kill, which forgets recent deliveries (docs/cluster.md, "A claim
     * that got no answer"): a first delivery of the ticket of a running job is dropped as a
     * duplicate of the run, and if the runner then dies, or restarts under the same id, nothing
     * else ever moves the record. Every node looks at the records running under its own id that
     * it does not hold (a restart); the leader also at those of nodes that are not present. A
     * record seen so, unchanged, for {@link #ORPHAN_LEASES} lease times, whose job has no ticket
     * in the queue ({@link JobQueue#holdsTicketOf}: a ticket still there comes back by itself,
     * to a takeover or, after max-deliver deliveries, to the dead letter), goes back to
     * {@code queued} under the next ticket (the lost attempt counts, as a takeover's does;
     * {@code cancelled} if a DELETE came meanwhile) and the ticket is published. Executed only
     * by the chores thread.
     */
    private void sweepOrphans() {
        long now = System.nanoTime();
        long after = ORPHAN_LEASES * queue.leaseTime().toNanos();
        boolean leader = node.isLeader();
        Map<String, Boolean> present = new HashMap<>();
        Set<String> seen = new HashSet<>();
        try {
            for (Versioned<JobRecord> v : store.list()) {
                JobRecord.Status s = v.value().status();
                String id = v.value().id();
                if (s.state() != JobState.RUNNING || s.node() == null
                        || (node.id().equals(s.node()) ? held.containsKey(id) : !leader || present.computeIfAbsent(s.node(), node::isPresent))) {
                    continue;
                }
                seen.add(id);
                Orphan o = orphans.get(id);
                if (o == null || !o.node().equals(s.node()) || o.ticket() != s.ticket() || o.attempt() != s.attempt()) {
                    orphans.put(id, new Orphan(s.node(), s.ticket(), s.attempt(), now));
                } else if (now - o.sinceNanos() >= after) {
                    if (queue.holdsTicketOf(id)) {
                        orphans.put(id, new Orphan(s.node(), s.ticket(), s.attempt(), now)); // it comes back by itself; look again later
                    } else {
                        requeueOrphan(id, o);
                        seen.remove(id);
                    }
                }
            }
            orphans.keySet().retainAll(seen);
        } catch (BackendException unreachable) {
            orphans.clear(); // nothing was watched meanwhile: every sighting starts again
        } catch (RuntimeException e) {
            log.warn("orphan sweep failed; it runs again shortly", e);
        }
    }

    /** Moves an orphaned record (as {@code o} saw it) back to the queue and publishes its next ticket. */
    private void requeueOrphan(String id, Orphan o) {
        JobRecord.Status back = putBack(id, r -> {
            JobRecord.Status s = r.status();
            return s.state() == JobState.RUNNING && o.node().equals(s.node()) && s.ticket() == o.ticket() && s.attempt() == o.attempt()
                    && !(node.id().equals(s.node()) && held.containsKey(id));
        }, (s, at) -> s.requeued(at, JobRecord.Counters.ZERO, null, null, false),
                r -> new JobTicket(id, o.ticket(), r.spec().priority(), null, pinQuietly(r)), "orphan");
        if (back != null && back.state() == JobState.QUEUED) {
            log.warn("job " + id + ": left running by node " + o.node() + " with no lease on it for " + ORPHAN_LEASES
                    + " lease times; queued again as ticket " + back.ticket());
        }
    }

    /**
     * The end both repairs of a lost state share ({@link #settleClaims}, {@link #requeueOrphan}):
     * a CAS of a record that nobody runs, while {@code stranded} still holds, to {@code cancelled}
     * if a DELETE came meanwhile, else to what {@code back} makes of its status (queued under
     * the next ticket), counted; then the ticket after {@code old} is published. One the queue
     * refuses goes into {@link #unsettled}, where settleClaims publishes it once the queue
     * answers. Returns the record's new status, or null if it needed nothing.
     */
    private JobRecord.Status putBack(String id, Predicate<JobRecord> stranded, BiFunction<JobRecord.Status, Instant, JobRecord.Status> back,
            Function<JobRecord, JobTicket> old, String cause) {
        Instant at = clock.instant();
        JobStore.Update u = store.update(id, r -> !stranded.test(r) ? null
                : r.withStatus(r.status().cancelRequested() ? r.status().finished(JobState.CANCELLED, at, JobRecord.Counters.ZERO, null, null)
                        : back.apply(r.status(), at)));
        if (!u.applied()) {
            return null;
        }
        JobRecord r = u.current().value();
        if (r.status().state() != JobState.QUEUED) {
            metrics.jobFinished(r.status().state().json(), Duration.ZERO);
            return r.status();
        }
        metrics.jobRequeued(cause);
        JobTicket previous = old.apply(r);
        try {
            queue.enqueue(previous.next(at));
        } catch (BackendException unreachable) {
            unsettled.put(id, new Unsettled(previous, true, NOT_CLEAR));
        }
        return r.status();
    }

    /** True if {@code r} stands for a claim of ticket {@code t} by this node that this node does not run. */
    private boolean landedUnrun(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        if (s.state() != JobState.RUNNING || !node.id().equals(s.node()) || s.ticket() != t.number()) {
            return false;
        }
        Local mine = held.get(r.id());
        return mine == null || mine.ticket != t.number(); // held: taken again under a later delivery
    }

    private void publishProgress() {
        for (Local l : held.values()) {
            Run r = l.run;
            if (r == null) {
                continue;
            }
            JobRecord.Counters c = new JobRecord.Counters(r.goroutinesSpawned(), r.messagesSent(), r.messagesReceived(), r.stepsRun());
            if (!c.equals(l.lastPublished)) {
                l.lastPublished = c;
                try {
                    store.publishProgress(new JobStore.Progress(l.id, l.attempt, c, r.liveGoroutines()));
                } catch (RuntimeException e) {
                    log.debug("progress of " + l.id + " dropped", e);
                }
            }
        }
    }

    /**
     * Drops live progress not heard of for a while whose record is no longer running: a progress
     * message that arrived after its attempt's final write would otherwise stay for ever.
     */
    private void forgetStaleProgress() {
        long now = System.nanoTime();
        for (Live p : progress.values()) {
            if (now - p.atNanos() > PROGRESS_STALE_NANOS) {
                try {
                    Optional<Versioned<JobRecord>> r = store.get(p.progress().jobId());
                    if (r.isEmpty() || r.get().value().status().state() != JobState.RUNNING
                            || r.get().value().status().attempt() != p.progress().attempt()) {
                        progress.remove(p.progress().jobId(), p);
                    }
                } catch (RuntimeException e) {
                    return; // the store is away: next round
                }
            }
        }
    }

    private void retention() {
        if (!node.isLeader()) {
            return;
        }
        try {
            int n = store.evict(properties.retention().maxFinishedJobs(), clock.instant().minus(properties.retention().maxAge()));
            metrics.jobsEvicted("retention", n);
        } catch (RuntimeException e) {
            log.debug("retention skipped this round", e);
        }
    }

    // ---------------------------------------------------------------- reads

    /** The job as its record stands, with the live counters of a running attempt wherever it runs. */
    JobView get(String id) {
        return view(findSummary(id).value());
    }

    JobService.Page list(java.util.function.Predicate<JobView> filter, int page, int size) {
        Map<String, Integer> leaks = leaksByJob(); // once for the page, not once per job
        List<JobView> all = store.list().stream().map(v -> view(v.value(), leaks)).filter(filter)
                .sorted(Comparator.comparing(JobView::submittedAt).reversed().thenComparing(JobView::id)).toList();
        int from = (int) Math.min((long) page * size, all.size());
        return new JobService.Page(all.subList(from, Math.min(from + size, all.size())), page, size, all.size());
    }

    /** Attempts running on this node now (what gosched.jobs.live shows): pulled jobs waiting for room are not. */
    int runningHere() {
        synchronized (slots) {
            return running - waitingForRoom.size();
        }
    }

    /** What the slots hold now, and how the tickets came here: for tests and the benchmark's notes. */
    record Dispatch(int running, long reserved, int pulled, int pullRoom, int waitingForRoom, int handedOver, long polledInPlace,
            long pulledByDispatcher, long dispatcherWakeups) {
        /** Leases taken and not yet queued up or dropped: {@code pulled} less the room of a pull still waiting for tickets. */
        int inFlight() {
            return pulled - pullRoom;
        }
    }

    Dispatch dispatch() {
        synchronized (slots) {
            return new Dispatch(running, reserved, pulled, pullRoom, waitingForRoom.size(), handedOver.size(), polledInPlace.sum(),
                    pulledByDispatcher.sum(), dispatcherWakeups.sum());
        }
    }

    /** Jobs waiting: in the queue, and pulled by this node but waiting here for room (their records are queued too). */
    long waiting() {
        OptionalInt exact = store.countQueued();
        if (exact.isPresent()) {
            return exact.getAsInt();
        }
        int here;
        synchronized (slots) {
            here = waitingForRoom.size();
        }
        return queue.depth() + here;
    }

    private Versioned<JobRecord> find(String id) {
        checkId(id);
        return store.get(id).orElseThrow(() -> new NotFoundException("job", id));
    }

    /** The record without its request, for a caller that shows or checks the status only (the in-memory store skips a parse). */
    private Versioned<JobRecord> findSummary(String id) {
        checkId(id);
        return store.summary(id).orElseThrow(() -> new NotFoundException("job", id));
    }

    private static void checkId(String id) {
        if (id == null || !JobTicket.isToken(id)) {
            throw new NotFoundException("job", id == null || id.length() > 64 ? "?" : id);
        }
    }

    /**
     * The view of a record. A running attempt shows its live counters: read from its run where it
     * runs on this node, else from the latest progress its node sent.
     */
    JobView view(JobRecord r) {
        return view(r, (Map<String, Integer>) null);
    }

    private JobView view(JobRecord r, Map<String, Integer> leaks) {
        Live p = local ? null : progress.get(r.id());
        return view(r, p == null ? null : p.progress(), leaks);
    }

    private JobView view(JobRecord r, JobStore.Progress progress) {
        return view(r, progress, null);
    }

    /**
     * Leak reports of this node's runtime ({@link GoRuntime#leakedGoroutines()}, the latest
     * {@code 10 000}) counted by their {@code job} label. Cluster mode: a job's leaks are known
     * to the node that ran the leaking attempt only.
     */
    private Map<String, Integer> leaksByJob() {
        Map<String, Integer> out = new java.util.HashMap<>();
        for (io.gosched.runtime.GoroutineInfo g : runtime.leakedGoroutines()) {
            String job = g.labels().get("job");
            if (job != null) {
                out.merge(job, 1, Integer::sum);
            }
        }
        return out;
    }

    private int leaked(String id, Map<String, Integer> leaks) {
        if (leaks != null) {
            return leaks.getOrDefault(id, 0);
        }
        int n = 0;
        for (io.gosched.runtime.GoroutineInfo g : runtime.leakedGoroutines()) {
            n += id.equals(g.labels().get("job")) ? 1 : 0;
        }
        return n;
    }

    private JobView view(JobRecord r, JobStore.Progress progress, Map<String, Integer> leaks) {
        JobRecord.Spec sp = r.spec();
        JobRecord.Status s = r.status();
        JobRecord.Counters c = s.counters();
        int live = 0;
        if (s.state() == JobState.RUNNING) {
            Local l = held.get(r.id());
            Run run = l == null ? null : l.run;
            if (run != null && l.attempt == s.attempt()) {
                c = c.plus(new JobRecord.Counters(run.goroutinesSpawned(), run.messagesSent(), run.messagesReceived(), run.stepsRun()));
                live = run.liveGoroutines();
            } else if (progress != null && progress.attempt() == s.attempt()) {
                c = c.plus(progress.counters());
                live = progress.liveGoroutines();
            }
        }
        Long durationMs = s.startedAt() == null ? null
                : Duration.between(s.startedAt(), s.finishedAt() != null ? s.finishedAt() : clock.instant()).toMillis();
        JobView.Result result = s.state() == JobState.SUCCEEDED ? new JobView.Result(s.lastReceived()) : null;
        JobRecord.Failure f = s.error();
        // The policy's budget counts from the last manual retry (attemptBase), so the attempt shown never exceeds it.
        int maxAttempts = Math.max(s.attempt(), s.attemptBase() + sp.maxAttempts());
        List<JobView.AttemptView> attempts = s.attempts().isEmpty() ? null : s.attempts().stream().map(a -> new JobView.AttemptView(
                a.number(), local ? null : a.node(), a.startedAt(), a.finishedAt(),
                a.startedAt() == null || a.finishedAt() == null ? null : Duration.between(a.startedAt(), a.finishedAt()).toMillis(),
                a.outcome(), a.error() == null ? null : new JobView.Error(a.error().reason(), a.error().pointer(), a.error().detail())))
                .toList();
        return new JobView(r.id(), s.state(), sp.name(), sp.template(), sp.priority(), s.attempt(), maxAttempts, sp.timeoutMs(),
                sp.submittedAt(), sp.notBefore(), s.queuedAt(), s.startedAt(), s.finishedAt(), durationMs,
                new JobView.Counters(c.goroutinesSpawned(), c.messagesSent(), c.messagesReceived(), c.stepsRun(), live),
                Optional.of(leaked(r.id(), leaks)).filter(n -> n > 0).orElse(null), sp.maxGoroutines(),
                local ? null : s.node(), result, f == null ? null : new JobView.Error(f.reason(), f.pointer(), f.detail()), attempts);
    }

    /**
     * SSE fed by the store's watch of the job (its record as written by any node) and the progress
     * of its running attempt (from whichever node runs it): {@code state} on a state or attempt
     * change, {@code progress} when counters move; ends after the final state or at shutdown.
     */
    Flux<JobEvent> events(String id) {
        findSummary(id); // 404 now rather than an empty stream
        return Flux.<JobView>create(sink -> {
            AtomicReference<JobRecord> record = new AtomicReference<>();
            AtomicReference<JobStore.Progress> progress = new AtomicReference<>();
            Object lock = new Object();
            Runnable emit = () -> {
                JobRecord r = record.get();
                if (r != null) {
                    synchronized (lock) {
                        sink.next(view(r, progress.get()));
                    }
                    if (r.status().state().isFinal()) {
                        sink.complete();
                    }
                }
            };
            AutoCloseable p = store.watchProgress(id, pr -> {
                progress.set(pr);
                emit.run();
            });
            AutoCloseable w = store.watch(id, r -> {
                if (r == null) {
                    sink.complete();
                    return;
                }
                record.set(r);
                emit.run();
            });
            sink.onDispose(() -> {
                closeQuietly(w);
                closeQuietly(p);
            });
        }, FluxSink.OverflowStrategy.LATEST).takeUntilOther(shutdown.draining()).transform(f -> {
            AtomicReference<JobView> last = new AtomicReference<>();
            AtomicInteger seq = new AtomicInteger();
            return f.filter(v -> {
                JobView prev = last.get();
                return prev == null || prev.state() != v.state() || !prev.counters().equals(v.counters()) || prev.attempt() != v.attempt();
            }).map(v -> {
                JobView prev = last.getAndSet(v);
                JobEvent.Kind kind = prev == null || prev.state() != v.state() || prev.attempt() != v.attempt()
                        ? JobEvent.Kind.STATE : JobEvent.Kind.PROGRESS;
                return new JobEvent(seq.incrementAndGet(), kind, v);
            }).takeUntil(e -> e.job().state().isFinal());
        });
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing to do
        }
    }

    // ---------------------------------------------------------------- control

    /** Cancel (protocol step 6), from any node. */
    JobService.Cancelled cancel(String id) {
        findSummary(id);
        Instant now = clock.instant();
        JobStore.Update u = store.update(id, r -> {
            JobRecord.Status s = r.status();
            if (s.state() == JobState.QUEUED) {
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
            metrics.jobFinished(JobState.CANCELLED.json(), Duration.ZERO);
            try {
                queue.withdraw(new JobTicket(id, s.ticket(), r.spec().priority(), r.spec().notBefore(), pinQuietly(r)));
            } catch (RuntimeException e) {
                log.debug("withdraw of " + id + " failed; its ticket turns stale", e);
            }
            return new JobService.Cancelled(view(r), true);
        }
        if (s.state() == JobState.RUNNING) {
            Local l = held.get(id);
            if (l != null) {
                l.changed(r); // do not wait for the change stream
            }
            return new JobService.Cancelled(view(r), false);
        }
        throw new ConflictException(ConflictException.Reason.JOB_FINISHED, "job '" + id + "' already finished as " + s.state().json())
                .with("state", s.state().json());
    }

    /** The node a record's ticket is pinned to, as at submission (channel homes do not move); null if none or unknown now. */
    private String pinQuietly(JobRecord r) {
        try {
            return pin(specs.parse(r.spec()).workload());
        } catch (RuntimeException e) {
            return null;
        }
    }

    JobView retry(String id) {
        Versioned<JobRecord> cur = find(id);
        JobState st = cur.value().status().state();
        if (!st.isFinal() || st == JobState.SUCCEEDED) {
            throw new ConflictException(ConflictException.Reason.JOB_NOT_RETRYABLE,
                    "only a failed, cancelled or timed-out job can be retried; this one is " + st.json()).with("state", st.json());
        }
        String pin = pin(specs.parse(cur.value().spec()).workload());
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
        return view(w.get().value());
    }

    // ---------------------------------------------------------------- shutdown

    /**
     * Graceful shutdown: pulls stop; running attempts are cancelled and, once their goroutines
     * ended (up to {@code grace}), their leases are released so that another node takes the jobs
     * at once (as their next attempt) instead of after the ack wait. Nothing is written as
     * cancelled: the jobs are not, they move.
     */
    boolean handBack(Duration grace) throws InterruptedException {
        shutdown.advance(ServiceShutdown.State.STOPPING);
        dispatcher.interrupt();
        List<Local> unstarted;
        List<JobLease> unclaimed;
        synchronized (slots) {
            unstarted = new ArrayList<>(waitingForRoom);
            unclaimed = new ArrayList<>(handedOver);
            handedOver.clear();
            pulled -= unclaimed.size();
        }
        unclaimed.forEach(this::release);
        for (Local l : unstarted) { // pulled, never claimed: straight back to the queue
            l.abandoned = true;
            memory.abandonClaimed(l.charge);
            endLocal(l);
            release(l.lease);
        }
        List<Local> mine = new ArrayList<>(held.values());
        for (Local l : mine) {
            l.abandoned = true;
            l.cancel();
        }
        long end = System.nanoTime() + grace.toNanos();
        while (!held.isEmpty() && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        for (Local l : mine) {
            if (l.lease.isOpen()) {
                release(l.lease);
            }
        }
        return held.isEmpty();
    }

    /**
     * Embedded mode's shutdown: the jobs live and die with this process, so every queued and
     * running one is cancelled, and the running ones get up to {@code grace} to end.
     *
     * @return true if no job runs any more
     */
    boolean cancelAll(Duration grace) throws InterruptedException {
        shutdown.advance(ServiceShutdown.State.STOPPING);
        for (Versioned<JobRecord> v : store.list()) {
            JobState s = v.value().status().state();
            if (s == JobState.QUEUED || s == JobState.RUNNING) {
                try {
                    cancel(v.value().id());
                } catch (NotFoundException | ConflictException raced) {
                    // it finished or went meanwhile: fine, it is not running for long either way
                }
            }
        }
        long end = System.nanoTime() + grace.toNanos();
        while (!held.isEmpty() && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        return held.isEmpty();
    }

    void close() {
        shutdown.advance(ServiceShutdown.State.CLOSED);
        dispatcher.interrupt();
        closeQuietly(changes);
        closeQuietly(progressFeed);
        chores.shutdownNow();
        finishers.shutdown();
        if (batchCalls != null) {
            batchCalls.shutdown(); // the dispatcher, stopped before this, waited for its last batch
        }
    }

    /** The engine runs until the node is CLOSED. */
    private boolean open() {
        return !shutdown.reached(ServiceShutdown.State.CLOSED);
    }

    /** The engine takes no more work from the queue once the node is STOPPING. */
    private boolean stopping() {
        return shutdown.reached(ServiceShutdown.State.STOPPING);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
