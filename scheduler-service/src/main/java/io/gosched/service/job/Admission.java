package io.gosched.service.job;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;

import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.metrics.ServiceMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.JsonNode;

/**
 * Submission (protocol step 1, {@code io.gosched.service.job.spi}): the one way in for a job,
 * whatever its kind. A submission is refused before any memory is committed to it: while the node
 * shuts down, when {@code max-queued-jobs} jobs already wait, when one job alone exceeds the
 * goroutine limit or its share of the memory budget, or when its channels live on different
 * nodes. An accepted job is created in the store ({@code queued}, ticket 1) and its first ticket
 * queued; an Idempotency-Key replays the job it made (or conflicts, for another body).
 *
 * <p>Thread-safe. Called from request threads; may block on a shared store.
 */
final class Admission {

    private static final Log log = LogFactory.getLog(Admission.class);

    private final JobStore store;
    private final JobQueue queue;
    private final JobSpecs specs;
    private final Pinning pinning;
    private final JobMemory memory;
    private final ServiceProperties.Admission admission;
    private final ServiceMetrics metrics;
    private final Clock clock;
    private final JobViews views;
    private final ServiceShutdown shutdown;
    /** Jobs waiting now, wherever they wait: what {@code max-queued-jobs} bounds. */
    private final LongSupplier waiting;
    /**
     * The store lives in this process: the specs of queued jobs are kept until their claim (and
     * size the store's records); in a cluster another node may claim a job, and nothing is kept.
     */
    private final boolean keepsSpecs;

    Admission(JobStore store, JobQueue queue, JobSpecs specs, Pinning pinning, JobMemory memory, ServiceProperties.Admission admission,
            ServiceMetrics metrics, Clock clock, JobViews views, ServiceShutdown shutdown, LongSupplier waiting) {
        this.store = store;
        this.queue = queue;
        this.specs = specs;
        this.pinning = pinning;
        this.memory = memory;
        this.admission = admission;
        this.metrics = metrics;
        this.clock = clock;
        this.views = views;
        this.shutdown = shutdown;
        this.waiting = waiting;
        this.keepsSpecs = !store.isShared();
    }

    /**
     * Validates and admits a job. Errors: invalid (with JSON pointers), a conflict (the same
     * Idempotency-Key with another body), refused (queue full, memory), shutting down.
     */
    JobService.Submitted submit(JsonNode body, String idempotencyKey) {
        shutdown.refuseNewWork();
        String hash = null;
        if (idempotencyKey != null) {
            if (idempotencyKey.isEmpty() || idempotencyKey.length() > 255 || !idempotencyKey.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                throw new InvalidRequestException("", "the Idempotency-Key header must be 1 to 255 printable ASCII characters");
            }
            hash = sha256(body.toString());
        }
        return admit(body, idempotencyKey, hash, null);
    }

    /** A job a schedule's tick makes: its id derived from the schedule and the tick, so a tick makes one job on any node. */
    record Scheduled(String jobId, String schedule, Instant scheduledFor) {}

    /**
     * Admits the job of a schedule's tick under its derived id, through the same checks as
     * {@link #submit}. If the job exists already (another node fired the tick, or this one did
     * before it died) it is answered as a replay, and repaired first if it was left queued without
     * a ticket: a node that died between the record's create and the ticket's enqueue leaves
     * exactly that, and the firing is retried until the schedule records it as submitted.
     */
    JobService.Submitted submitScheduled(JsonNode body, Scheduled scheduled) {
        shutdown.refuseNewWork();
        Optional<Versioned<JobRecord>> prior = store.get(scheduled.jobId());
        if (prior.isPresent()) {
            return scheduledExists(prior.get().value());
        }
        return admit(body, null, null, scheduled);
    }

    /**
     * The job of a tick that exists already, its first ticket queued again if nothing holds one.
     * Queueing it twice is harmless: the queue keeps one copy of a ticket (job id and number)
     * within its duplicate window, and a copy outside it would be stale under the claim protocol
     * once the job has moved on.
     */
    private JobService.Submitted scheduledExists(JobRecord r) {
        JobRecord.Status s = r.status();
        if (s.state() == io.gosched.service.job.spi.JobState.QUEUED && s.ticket() == 1 && !queue.holdsTicketOf(r.id())) {
            log.info("job " + r.id() + " of schedule " + r.spec().schedule() + " was stored but not queued; queueing it");
            queue.enqueue(new JobTicket(r.id(), 1, r.spec().priority(), r.spec().notBefore(), pinning.pinQuietly(r)));
        }
        return new JobService.Submitted(views.view(r), true);
    }

    /**
     * Admits a job: its Idempotency-Key replayed or claimed, its body parsed into a spec
     * ({@link JobSpecs}: where a new kind of job plugs in), checked against the limits, pinned to
     * its channels' home, stored and queued. Every refusal comes before any memory is committed.
     *
     * @param hash       the body's SHA-256, with a key (null without)
     * @param scheduled  the schedule's tick it is for, or null for a client's job
     */
    private JobService.Submitted admit(JsonNode body, String idempotencyKey, String hash, Scheduled scheduled) {
        if (idempotencyKey != null) {
            Optional<Versioned<IdempotencyEntry>> prior = store.key(idempotencyKey);
            if (prior.isPresent()) {
                return replay(prior.get().value(), hash);
            }
        }
        Instant now = clock.instant();
        JobSpec spec = specs.parse(body, now);
        String pointer = spec.template() == null ? "/workload" : "/params";
        String pin = pinning.pin(spec.workload());
        if (spec.workload().goroutines() > admission.maxLiveGoroutines()) {
            throw new InvalidRequestException(pointer, "would start " + spec.workload().goroutines()
                    + " goroutines, more than the service's limit of " + admission.maxLiveGoroutines());
        }
        long requestBytes = memory.checkShare(spec, pointer);
        if (waiting.getAsLong() >= admission.maxQueuedJobs()) {
            throw new RefusedException(RefusedException.Reason.OVERLOADED, (keepsSpecs ? "the queue holds " : "the cluster's queue holds ")
                    + admission.maxQueuedJobs() + " or more waiting jobs, the limit (gosched.api.admission.max-queued-jobs)",
                    admission.retryAfter());
        }
        String id = scheduled == null ? UUID.randomUUID().toString() : scheduled.jobId();
        Versioned<IdempotencyEntry> key = null;
        if (idempotencyKey != null) {
            Optional<Versioned<IdempotencyEntry>> prior = store.claimKey(idempotencyKey, new IdempotencyEntry(id, hash));
            if (prior.isPresent()) {
                return replay(prior.get().value(), hash); // another node won the key
            }
            key = store.key(idempotencyKey).orElse(null);
        }
        JobRecord record = new JobRecord(id, new JobRecord.Spec(body, spec.name(), spec.template(), spec.priority(),
                spec.retry().maxAttempts(), spec.timeoutMs(), spec.workload().goroutines(), now, spec.notBefore(), idempotencyKey, hash,
                scheduled == null ? null : scheduled.schedule(), scheduled == null ? null : scheduled.scheduledFor()),
                JobRecord.Status.queued(now));
        if (keepsSpecs) {
            specs.remember(id, spec, requestBytes); // the in-memory store sizes the record from it
        }
        try {
            if (store.create(record).isEmpty()) {
                if (scheduled != null) { // another node made the tick's job meanwhile
                    specs.forget(id);
                    return store.get(id).map(v -> scheduledExists(v.value())).orElseThrow(() -> new ConflictException(
                            ConflictException.Reason.JOB_BUSY, "the job of this tick ('" + id + "') is changing; try again"));
                }
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
        return new JobService.Submitted(views.view(record, Map.<String, Integer>of()), false);
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
                return new JobService.Submitted(views.view(r.get().value()), true);
            }
            if (System.nanoTime() - end > 0) {
                throw new ConflictException(ConflictException.Reason.JOB_BUSY, "the job of this Idempotency-Key ('" + entry.jobId()
                        + "') is still being stored by another node; try again").with("jobId", entry.jobId());
            }
            Leases.pause(Duration.ofMillis(20));
        }
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
