package io.gosched.service.job;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;

import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.Violation;
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
    private final Dependencies deps;

    Admission(JobStore store, JobQueue queue, JobSpecs specs, Pinning pinning, JobMemory memory, ServiceProperties.Admission admission,
            ServiceMetrics metrics, Clock clock, JobViews views, ServiceShutdown shutdown, LongSupplier waiting, Dependencies deps) {
        this.deps = deps;
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
        return admit(body, idempotencyKey, hash);
    }

    /**
     * Admits a job: its Idempotency-Key replayed or claimed, its body parsed into a spec
     * ({@link JobSpecs}: where a new kind of job plugs in), checked against the limits, pinned to
     * its channels' home, stored and queued. Every refusal comes before any memory is committed.
     *
     * @param hash  the body's SHA-256, with a key (null without)
     */
    private JobService.Submitted admit(JsonNode body, String idempotencyKey, String hash) {
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
        if (!spec.after().isEmpty()) {
            List<Violation> unknown = new ArrayList<>();
            deps.checkExist(spec.after(), "/after", unknown);
            if (!unknown.isEmpty()) {
                throw new InvalidRequestException(unknown);
            }
        }
        long requestBytes = memory.checkShare(spec, pointer);
        checkRoom(1);
        String id = UUID.randomUUID().toString();
        Versioned<IdempotencyEntry> key = null;
        if (idempotencyKey != null) {
            Optional<Versioned<IdempotencyEntry>> prior = store.claimKey(idempotencyKey, new IdempotencyEntry(id, hash));
            if (prior.isPresent()) {
                return replay(prior.get().value(), hash); // another node won the key
            }
            key = store.key(idempotencyKey).orElse(null);
        }
        boolean waits = !spec.after().isEmpty();
        JobRecord record = new JobRecord(id, new JobRecord.Spec(body, spec.name(), spec.template(), spec.priority(),
                spec.retry().maxAttempts(), spec.timeoutMs(), spec.workload().goroutines(), now, spec.notBefore(), idempotencyKey, hash,
                spec.after()), waits ? JobRecord.Status.waiting() : JobRecord.Status.queued(now));
        if (keepsSpecs) {
            specs.remember(id, spec, requestBytes); // the in-memory store sizes the record from it
        }
        if (waits) {
            deps.track(id, spec.after()); // before the create: an end of theirs from now on is not missed
        }
        try {
            if (store.create(record).isEmpty()) {
                throw new IllegalStateException("job id " + id + " already exists");
            }
        } catch (RuntimeException e) {
            deps.untrack(id);
            specs.forget(id);
            releaseKey(idempotencyKey, key);
            throw e;
        }
        if (waits) {
            metrics.jobSubmitted();
            return new JobService.Submitted(views.view(resolveQuietly(record)), false);
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

    /**
     * Refuses {@code n} more jobs when {@code max-queued-jobs} jobs already wait: those in the queue and those waiting
     * for other jobs ({@code waiting}: each holds a record and enters the queue as soon as its dependencies succeeded,
     * so a limit that left them out would let a client park any number of jobs behind one that never ends).
     */
    private void checkRoom(int n) {
        long now = waiting.getAsLong() + deps.waitingCount();
        if (now + n > admission.maxQueuedJobs()) {
            throw new RefusedException(RefusedException.Reason.OVERLOADED, (keepsSpecs ? "the queue holds " : "the cluster's queue holds ")
                    + now + " waiting jobs" + (n > 1 ? " and cannot take " + n + " more" : "") + "; the limit is "
                    + admission.maxQueuedJobs() + " (gosched.api.admission.max-queued-jobs)", admission.retryAfter());
        }
    }

    /**
     * The re-check after the create of a waiting record: a job it names that ended between the
     * check of the body and the create is seen now. If the store does not answer, the sweep
     * resolves it later.
     */
    private JobRecord resolveQuietly(JobRecord record) {
        try {
            JobRecord r = deps.resolve(record.id());
            return r == null ? record : r;
        } catch (RuntimeException e) {
            log.debug("job " + record.id() + ": first resolution of its dependencies failed; the sweep does it", e);
            return record;
        }
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
