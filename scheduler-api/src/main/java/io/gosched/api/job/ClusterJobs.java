package io.gosched.api.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.channel.spi.ChannelDirectory;
import io.gosched.api.channel.spi.ChannelHome;
import io.gosched.api.error.ApiProblem;
import io.gosched.api.error.BackendException;
import io.gosched.api.job.spi.IdempotencyEntry;
import io.gosched.api.job.spi.JobLease;
import io.gosched.api.job.spi.JobNode;
import io.gosched.api.job.spi.JobQueue;
import io.gosched.api.job.spi.JobRecord;
import io.gosched.api.job.spi.JobStore;
import io.gosched.api.job.spi.JobTicket;
import io.gosched.api.job.spi.Versioned;
import io.gosched.api.workload.Interpreter;
import io.gosched.api.workload.Run;
import io.gosched.api.workload.Step;
import io.gosched.api.workload.Violation;
import io.gosched.api.workload.Workload;
import io.gosched.runtime.Chan;
import io.gosched.runtime.GoRuntime;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;

import org.springframework.http.codec.ServerSentEvent;

/**
 * The job service over the ports ({@link JobQueue}, {@link JobStore}): what {@link JobService}
 * runs when the application has a shared queue and store (cluster mode). It runs the protocol of
 * {@link io.gosched.api.job.spi} word for word; the record in the store is the truth, this node
 * holds only the jobs it runs.
 *
 * <h2>Threads</h2>
 * <ul>
 * <li>the dispatcher ({@code gosched-job-dispatch}, a platform thread) pulls only as many tickets
 *     as this node has free running slots, claims each with a CAS and starts it as goroutines. A
 *     pulled job that does not fit the free goroutine reservation or the memory budget waits on
 *     this node under its (renewed) lease, as the head of the embedded queue waits; nothing more
 *     is pulled meanwhile, so other nodes take the rest;</li>
 * <li>finishers (platform threads) write an attempt's outcome with a fenced CAS and ack, retrying
 *     while the store cannot be reached: goroutines never block on the network;</li>
 * <li>the chores thread publishes progress of local runs and, on the leader, runs retention.</li>
 * </ul>
 *
 * <h2>Memory</h2>
 * The budget charges what this node holds: a job's request, goroutine stacks and own channels from
 * its claim until its attempt ends. Queued and finished jobs live in the store, bounded by
 * {@code gosched.cluster.max-queue-bytes} / {@code max-store-bytes} (429 when full), not here.
 */
final class ClusterJobs {

    private static final Log log = LogFactory.getLog(ClusterJobs.class);
    /** How long one pull waits for a ticket before the dispatcher looks at its room again. */
    private static final Duration PULL_WAIT = Duration.ofMillis(500);
    private static final long PROGRESS_EVERY_MS = 250;
    private static final long RETENTION_EVERY_MS = 5_000;
    private static final Duration RETRY_WRITE = Duration.ofMillis(500);

    private final GoRuntime runtime;
    private final ChannelService channels;
    private final ChannelDirectory directory; // null without a directory: shared channels are this node's
    private final ApiProperties properties;
    private final ApiMetrics metrics;
    private final JobSpecParser parser;
    private final Interpreter interpreter = new Interpreter();
    private final Clock clock;
    private final JobMemory memory;
    private final JobQueue queue;
    private final JobStore store;
    private final JobNode node;

    /** Jobs this node runs now, by id. */
    private final ConcurrentHashMap<String, Local> local = new ConcurrentHashMap<>();
    private final Object slots = new Object();
    private int running; // guarded by slots: claimed jobs, started or waiting for room
    private long reserved; // guarded by slots: goroutines reserved by started jobs
    private final ArrayDeque<Local> waitingForRoom = new ArrayDeque<>(); // guarded by slots

    private volatile boolean open = true;
    private volatile boolean shuttingDown;
    private final Sinks.Empty<Void> shutdown;
    private final Thread dispatcher;
    private final ExecutorService finishers;
    private final ScheduledExecutorService chores;
    private final AutoCloseable changes;

    /** One claimed job on this node. */
    private final class Local {
        final String id;
        final JobSpec spec;
        final JobRecord.Spec recordSpec;
        final int attempt;
        final long ticket;
        volatile JobLease lease;
        final JobMemory.Charge charge;
        volatile Run run;
        volatile boolean cancelRequested;
        /** Shutdown or a takeover elsewhere: the attempt's outcome is not written, the lease is handed back or dropped. */
        volatile boolean abandoned;
        volatile boolean fenced;
        JobRecord.Counters lastPublished;

        Local(String id, JobSpec spec, JobRecord.Spec recordSpec, int attempt, long ticket, JobLease lease, JobMemory.Charge charge) {
            this.id = id;
            this.spec = spec;
            this.recordSpec = recordSpec;
            this.attempt = attempt;
            this.ticket = ticket;
            this.lease = lease;
            this.charge = charge;
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

    ClusterJobs(GoRuntime runtime, ChannelService channels, ChannelDirectory directory, ApiProperties properties, ApiMetrics metrics,
            JobSpecParser parser, Clock clock, JobMemory memory, JobQueue queue, JobStore store, JobNode node, Sinks.Empty<Void> shutdown) {
        this.runtime = runtime;
        this.channels = channels;
        this.directory = directory;
        this.properties = properties;
        this.metrics = metrics;
        this.parser = parser;
        this.clock = clock;
        this.memory = memory;
        this.queue = queue;
        this.store = store;
        this.node = node;
        this.shutdown = shutdown;
        queue.onLost(this::lost);
        this.changes = store.watchAll((id, r) -> {
            Local l = local.get(id);
            if (l != null) {
                l.changed(r);
            }
        });
        this.finishers = Executors.newFixedThreadPool(2, r -> Thread.ofPlatform().name("gosched-job-finisher", 0).daemon(true).unstarted(r));
        this.chores = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name("gosched-job-chores").daemon(true).unstarted(r));
        chores.scheduleWithFixedDelay(this::publishProgress, PROGRESS_EVERY_MS, PROGRESS_EVERY_MS, TimeUnit.MILLISECONDS);
        chores.scheduleWithFixedDelay(this::retention, RETENTION_EVERY_MS, RETENTION_EVERY_MS, TimeUnit.MILLISECONDS);
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
        JobSpec spec = parser.parse(body, now);
        String pointer = spec.template() == null ? "/workload" : "/params";
        String pin = pin(spec.workload());
        if (spec.workload().goroutines() > properties.admission().maxLiveGoroutines()) {
            throw ApiProblem.invalid(pointer, "would start " + spec.workload().goroutines()
                    + " goroutines, more than the service's limit of " + properties.admission().maxLiveGoroutines());
        }
        memory.checkShare(spec, pointer);
        if (queue.depth() >= properties.admission().maxQueuedJobs()) {
            throw ApiProblem.overloaded("the cluster's queue holds " + properties.admission().maxQueuedJobs()
                    + " or more waiting jobs, the limit (gosched.api.admission.max-queued-jobs)", properties.admission().retryAfter());
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
        try {
            if (store.create(record).isEmpty()) {
                throw new IllegalStateException("job id " + id + " already exists");
            }
        } catch (RuntimeException e) {
            releaseKey(idempotencyKey, key);
            throw e;
        }
        try {
            queue.enqueue(new JobTicket(id, 1, spec.priority(), spec.notBefore(), pin));
        } catch (RuntimeException e) {
            // No ticket, no job: take the record back so that nothing waits for ever.
            store.get(id).ifPresent(v -> store.remove(id, v.revision()));
            releaseKey(idempotencyKey, key);
            throw e;
        }
        metrics.jobSubmitted();
        return new JobService.Submitted(view(record), false);
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
            throw ApiProblem.conflict("idempotency-conflict", "Idempotency-Key reused",
                    "the Idempotency-Key was already used with a different request body").with("jobId", entry.jobId());
        }
        long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (true) {
            Optional<Versioned<JobRecord>> r = store.get(entry.jobId());
            if (r.isPresent()) {
                return new JobService.Submitted(view(r.get().value()), true);
            }
            if (System.nanoTime() - end > 0) {
                throw ApiProblem.conflict("job-busy", "Job changing state", "the job of this Idempotency-Key ('" + entry.jobId()
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
            String home = null;
            if (directory != null) {
                home = directory.home(name).map(ChannelHome::node).orElse(null);
            }
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
            throw ApiProblem.invalid(missing);
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
        throw ApiProblem.invalid(v);
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

    /** The dispatcher's loop; ends when the service closes. */
    private void dispatchLoop() {
        while (open) {
            try {
                startWaiting();
                int room = room();
                if (room == 0) {
                    synchronized (slots) {
                        slots.wait(200); // a finished attempt notifies
                    }
                    continue;
                }
                for (JobLease lease : queue.pull(room, PULL_WAIT)) {
                    if (!open || shuttingDown) {
                        release(lease);
                        continue;
                    }
                    claim(lease);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn("job dispatch: " + e.getMessage() + "; trying again shortly", e);
                sleep(Duration.ofMillis(500));
            }
        }
    }

    /** Free running slots, or 0 while a claimed job waits for room or the goroutine reservation is spent. */
    private int room() {
        synchronized (slots) {
            if (shuttingDown || !waitingForRoom.isEmpty() || reserved >= properties.admission().maxLiveGoroutines()) {
                return 0;
            }
            return Math.max(0, properties.admission().maxRunningJobs() - running);
        }
    }

    /**
     * Claim (protocol step 2): reads the record, drops a stale ticket, then moves the record to
     * {@code running} on this node as the next attempt with a CAS.
     */
    private void claim(JobLease lease) {
        JobTicket t = lease.ticket();
        Local mine = local.get(t.jobId());
        if (mine != null && mine.ticket == t.number()) {
            // our own lease lapsed (NATS was away) and came back to us: keep running under the new one
            JobLease old = mine.lease;
            mine.lease = lease;
            old.abandon();
            return;
        }
        Optional<Versioned<JobRecord>> cur;
        try {
            cur = store.get(t.jobId());
        } catch (BackendException e) {
            release(lease);
            return;
        }
        if (cur.isPresent() && orphanedRetry(cur.get().value(), t)) {
            // the runner of ticket n died between its CAS to queued(n + 1) and the publish of n + 1:
            // publish it now (deduplicated by message id if it did go out), then drop ticket n
            JobRecord q = cur.get().value();
            try {
                queue.enqueue(t.next(q.status().queuedAt().plusMillis(parser.parse(q.spec().request(), q.spec().submittedAt())
                        .retry().backoffBefore(q.status().attempt() + 1))));
            } catch (BackendException e) {
                release(lease);
                return;
            }
            complete(lease);
            return;
        }
        if (cur.isEmpty() || stale(cur.get().value(), t)
                || cur.get().value().status().state() == JobState.RUNNING && lease.delivery() == 1) {
            // a running record is taken over only from a lapsed lease; a first delivery of its ticket is a duplicate
            complete(lease);
            return;
        }
        JobRecord r = cur.get().value();
        JobSpec spec;
        try {
            spec = parser.parse(r.spec().request(), r.spec().submittedAt());
        } catch (RuntimeException unparsable) {
            // a node with other limits accepted it: it can never run here, nor, with equal limits, anywhere
            Instant now = clock.instant();
            store.update(r.id(), x -> stale(x, t) ? null : x.withStatus(x.status().claimed(node.id(), now).finished(JobState.FAILED, now,
                    JobRecord.Counters.ZERO, null, new JobRecord.Failure(JobRecord.Failure.REFUSED, "", "node " + node.id()
                            + " cannot parse the job with its gosched.api.limits: " + unparsable.getMessage()))));
            complete(lease);
            return;
        }
        Instant now = clock.instant();
        JobStore.Update u;
        try {
            u = store.update(t.jobId(), x -> stale(x, t) ? null : x.withStatus(x.status().claimed(node.id(), now)));
        } catch (RuntimeException e) {
            // NATS went away mid-claim: the CAS may have landed or not. Hand the ticket back; its next
            // delivery (above 1) takes a record left running by this claim over, or claims a queued one.
            release(lease);
            return;
        }
        if (!u.applied()) {
            complete(lease); // cancelled, or taken by another node, between the read and the CAS
            return;
        }
        JobRecord.Status s = u.current().value().status();
        if (s.attempt() > 1 && lease.delivery() > 1 && r.status().state() == JobState.RUNNING) {
            log.info("job " + t.jobId() + ": taking over from node " + r.status().node() + " as attempt " + s.attempt());
        }
        Local l = new Local(t.jobId(), spec, r.spec(), s.attempt(), t.number(), lease, memory.admitClaimed(spec));
        local.put(l.id, l);
        if (s.cancelRequested()) {
            l.cancelRequested = true;
        }
        synchronized (slots) {
            running++;
            waitingForRoom.addLast(l);
        }
        startWaiting();
    }

    /** True if the record was requeued from this ticket as the next one (an automatic retry). */
    private static boolean orphanedRetry(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        // a manual retry publishes its ticket before its CAS and resets attemptBase to attempt: never orphaned
        return s.state() == JobState.QUEUED && s.ticket() == t.number() + 1 && s.attempt() > s.attemptBase();
    }

    /** True if the ticket no longer stands for a runnable attempt of the record. */
    private static boolean stale(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        return s.state().isFinal() || s.ticket() != t.number();
    }

    /** Starts claimed jobs in claim order while their goroutine reservation and memory fit. */
    private void startWaiting() {
        List<Local> start = new ArrayList<>();
        synchronized (slots) {
            Local l;
            while ((l = waitingForRoom.peekFirst()) != null) {
                long g = l.spec.workload().goroutines();
                boolean alone = running - waitingForRoom.size() == 0;
                if (!alone && reserved + g > properties.admission().maxLiveGoroutines()) {
                    break;
                }
                if (!memory.tryStart(l.charge)) {
                    if (!alone) {
                        break; // a finishing attempt frees memory and notifies
                    }
                    memory.forceStart(l.charge);
                }
                waitingForRoom.pollFirst();
                reserved += g;
                start.add(l);
            }
        }
        for (Local l : start) {
            try {
                // Every goroutine of the job carries job=<id> (and its template): dumps, leaks, traces.
                runtime.go(() -> io.gosched.runtime.Go.withLabels(l.spec.template() == null ? java.util.Map.of("job", l.id)
                        : java.util.Map.of("job", l.id, "template", l.spec.template()), () -> run(l)));
            } catch (RuntimeException refused) { // the runtime is closing: hand the job back
                l.abandoned = true;
                endLocal(l);
                release(l.lease);
            }
        }
    }

    /** The main goroutine of one attempt. */
    private void run(Local l) {
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
        finishers.execute(() -> finish(l, run, err));
    }

    /**
     * Finish (protocol steps 3 to 5): the outcome goes in with a CAS fenced on this node and
     * attempt, then the lease is completed. Retried while the store cannot be reached; a runner
     * whose attempt was taken over drops its outcome and its lease.
     */
    private void finish(Local l, Run run, RuntimeException err) {
        JobState outcome = Attempt.outcome(run, l.cancelRequested, err);
        Run.Failure f = outcome == JobState.TIMED_OUT ? new Run.Failure("", "the job ran past its timeout of " + l.spec.timeoutMs() + " ms")
                : run.failure();
        JobRecord.Failure failure = f == null ? null
                : new JobRecord.Failure(outcome == JobState.TIMED_OUT ? JobRecord.Failure.TIMEOUT : JobRecord.Failure.STEP, f.pointer(), f.detail());
        JobRecord.Counters counters = new JobRecord.Counters(run.goroutinesSpawned(), run.messagesSent(), run.messagesReceived(), run.stepsRun());
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
                    if (write(l, outcome, retry, counters, run.lastReceived(), failure)) {
                        complete(l.lease);
                    } else {
                        l.lease.abandon(); // another node holds the job now
                    }
                    return;
                } catch (BackendException unreachable) {
                    if (!open) {
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
            endLocal(l);
        }
    }

    /** The fenced CAS of an attempt's outcome; false when the record names another attempt. */
    private boolean write(Local l, JobState outcome, boolean retry, JobRecord.Counters counters, JsonNode received,
            JobRecord.Failure failure) {
        Instant now = clock.instant();
        JobStore.Update u = store.update(l.id, r -> {
            JobRecord.Status s = r.status();
            if (s.state() != JobState.RUNNING || !node.id().equals(s.node()) || s.attempt() != l.attempt || s.ticket() != l.ticket) {
                return null;
            }
            if (retry && s.attemptsLeft(r.spec().maxAttempts())) {
                return r.withStatus(s.requeued(now, counters, received, failure, false));
            }
            return r.withStatus(s.finished(outcome, now, counters, received, failure));
        });
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
                    if (!open) {
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

    private void endLocal(Local l) {
        local.remove(l.id, l);
        synchronized (slots) {
            running--;
            if (!waitingForRoom.remove(l)) {
                reserved -= l.spec.workload().goroutines();
            }
            slots.notifyAll();
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
        try {
            lease.release(Duration.ZERO);
        } catch (RuntimeException e) {
            log.debug("release of " + lease + " failed; it lapses after the ack wait instead", e);
        }
    }

    /** The dead letter (protocol step 7): the job fails as lost, unless its ticket is stale already. */
    private void lost(JobTicket t, int deliveries) {
        Instant now = clock.instant();
        JobStore.Update u = store.update(t.jobId(), r -> stale(r, t) ? null : r.lost(now, deliveries));
        if (u.applied()) {
            metrics.jobFinished(JobState.FAILED.json(), Duration.ZERO);
            log.warn("job " + t.jobId() + " lost: delivered " + deliveries + " times and no node finished it");
        }
    }

    // ---------------------------------------------------------------- chores

    private void publishProgress() {
        for (Local l : local.values()) {
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

    JobView get(String id) {
        return view(find(id).value());
    }

    JobService.Page list(JobState state, int page, int size) {
        List<JobView> all = store.list().stream().map(v -> view(v.value())).filter(v -> state == null || v.state() == state)
                .sorted(Comparator.comparing(JobView::submittedAt).reversed().thenComparing(JobView::id)).toList();
        int from = (int) Math.min((long) page * size, all.size());
        return new JobService.Page(all.subList(from, Math.min(from + size, all.size())), page, size, all.size());
    }

    int runningHere() {
        return local.size();
    }

    long waiting() {
        return queue.depth();
    }

    int size() {
        return store.list().size();
    }

    private Versioned<JobRecord> find(String id) {
        if (id == null || !JobTicket.JOB_ID.matcher(id).matches()) {
            throw ApiProblem.notFound("job", id == null || id.length() > 64 ? "?" : id);
        }
        return store.get(id).orElseThrow(() -> ApiProblem.notFound("job", id));
    }

    /** The view of a record; a job running on this node shows its live counters, others those of progress (if given). */
    JobView view(JobRecord r) {
        return view(r, null);
    }

    private JobView view(JobRecord r, JobStore.Progress progress) {
        JobRecord.Spec sp = r.spec();
        JobRecord.Status s = r.status();
        JobRecord.Counters c = s.counters();
        int live = 0;
        if (s.state() == JobState.RUNNING) {
            Local l = local.get(r.id());
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
        return new JobView(r.id(), s.state(), sp.name(), sp.template(), sp.priority(), s.attempt(), sp.maxAttempts(), sp.timeoutMs(),
                sp.submittedAt(), sp.notBefore(), s.queuedAt(), s.startedAt(), s.finishedAt(), durationMs,
                new JobView.Counters(c.goroutinesSpawned(), c.messagesSent(), c.messagesReceived(), c.stepsRun(), live), sp.maxGoroutines(),
                s.node(), result, f == null ? null : new JobView.Error(f.reason(), f.pointer(), f.detail()));
    }

    /**
     * SSE fed by the store's watch of the job (its record as written by any node) and the progress
     * of its running attempt (from whichever node runs it): {@code state} on a state or attempt
     * change, {@code progress} when counters move; ends after the final state or at shutdown.
     */
    Flux<ServerSentEvent<JobView>> events(String id) {
        find(id); // 404 now rather than an empty stream
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
        }, FluxSink.OverflowStrategy.LATEST).takeUntilOther(shutdown.asMono()).transform(f -> {
            AtomicReference<JobView> last = new AtomicReference<>();
            AtomicInteger seq = new AtomicInteger();
            return f.filter(v -> {
                JobView prev = last.get();
                return prev == null || prev.state() != v.state() || !prev.counters().equals(v.counters()) || prev.attempt() != v.attempt();
            }).map(v -> {
                JobView prev = last.getAndSet(v);
                String event = prev == null || prev.state() != v.state() || prev.attempt() != v.attempt() ? "state" : "progress";
                return ServerSentEvent.builder(v).id(Integer.toString(seq.incrementAndGet())).event(event).build();
            }).takeUntil(e -> e.data().state().isFinal());
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
        find(id);
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
            throw ApiProblem.notFound("job", id);
        }
        JobRecord r = u.current().value();
        JobRecord.Status s = r.status();
        if (s.state() == JobState.CANCELLED && u.applied()) {
            metrics.jobFinished(JobState.CANCELLED.json(), Duration.ZERO);
            try {
                queue.withdraw(new JobTicket(id, s.ticket(), r.spec().priority(), r.spec().notBefore(), pinQuietly(r)));
            } catch (RuntimeException e) {
                log.debug("withdraw of " + id + " failed; its ticket turns stale", e);
            }
            return new JobService.Cancelled(view(r), true);
        }
        if (s.state() == JobState.RUNNING) {
            Local l = local.get(id);
            if (l != null) {
                l.changed(r); // do not wait for the change stream
            }
            return new JobService.Cancelled(view(r), false);
        }
        throw ApiProblem.conflict("job-finished", "Job already finished", "job '" + id + "' already finished as " + s.state().json())
                .with("state", s.state().json());
    }

    /** The node a record's ticket is pinned to, as at submission (channel homes do not move); null if none or unknown now. */
    private String pinQuietly(JobRecord r) {
        try {
            return pin(parser.parse(r.spec().request(), r.spec().submittedAt()).workload());
        } catch (RuntimeException e) {
            return null;
        }
    }

    JobView retry(String id) {
        Versioned<JobRecord> cur = find(id);
        JobState st = cur.value().status().state();
        if (!st.isFinal() || st == JobState.SUCCEEDED) {
            throw ApiProblem.conflict("job-not-retryable", "Job cannot be retried",
                    "only a failed, cancelled or timed-out job can be retried; this one is " + st.json()).with("state", st.json());
        }
        String pin = pin(parser.parse(cur.value().spec().request(), cur.value().spec().submittedAt()).workload());
        Instant now = clock.instant();
        JobRecord.Status s = cur.value().status();
        JobTicket next = new JobTicket(id, s.ticket() + 1, cur.value().spec().priority(), null, pin);
        queue.enqueue(next); // first: a ticket without its record's move is stale; a move without its ticket would wait for ever
        Optional<Versioned<JobRecord>> w = store.replace(cur.value().withStatus(s.requeued(now, JobRecord.Counters.ZERO, null, null, true)),
                cur.revision());
        if (w.isEmpty()) {
            throw ApiProblem.conflict("job-busy", "Job changing state", "job '" + id + "' changed state; try again");
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
        shuttingDown = true;
        dispatcher.interrupt();
        List<Local> unstarted;
        synchronized (slots) {
            unstarted = new ArrayList<>(waitingForRoom);
        }
        for (Local l : unstarted) {
            l.abandoned = true;
            memory.abandonClaimed(l.charge);
            endLocal(l);
        }
        List<Local> mine = new ArrayList<>(local.values());
        for (Local l : mine) {
            l.abandoned = true;
            l.cancel();
        }
        long end = System.nanoTime() + grace.toNanos();
        while (!local.isEmpty() && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        for (Local l : mine) {
            if (l.lease.isOpen()) {
                release(l.lease);
            }
        }
        return local.isEmpty();
    }

    void close() {
        open = false;
        shuttingDown = true;
        dispatcher.interrupt();
        closeQuietly(changes);
        chores.shutdownNow();
        finishers.shutdown();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
