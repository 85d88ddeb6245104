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
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.workload.JsonInput;
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
    /** Over a shared store, the records created here until their claim, so that a claim here need not read them back. */
    private final CreatedHere createdHere;

    Admission(JobStore store, JobQueue queue, JobSpecs specs, Pinning pinning, JobMemory memory, ServiceProperties.Admission admission,
            ServiceMetrics metrics, Clock clock, JobViews views, ServiceShutdown shutdown, LongSupplier waiting, Dependencies deps,
            CreatedHere createdHere) {
        this.deps = deps;
        this.createdHere = createdHere;
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
        if (!spec.after().isEmpty()) {
            List<Violation> unknown = new ArrayList<>();
            deps.checkExist(spec.after(), "/after", unknown);
            if (!unknown.isEmpty()) {
                throw new InvalidRequestException(unknown);
            }
        }
        long requestBytes = memory.checkShare(spec, pointer);
        checkRoom(1);
        String id = scheduled == null ? UUID.randomUUID().toString() : scheduled.jobId();
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
                spec.after(), scheduled == null ? null : scheduled.schedule(), scheduled == null ? null : scheduled.scheduledFor(),
                spec.kind()), waits ? JobRecord.Status.waiting() : JobRecord.Status.queued(now));
        if (keepsSpecs) {
            specs.remember(id, spec, requestBytes); // the in-memory store sizes the record from it
        }
        if (waits) {
            deps.track(id, spec.after()); // before the create: an end of theirs from now on is not missed
        }
        try {
            Optional<Versioned<JobRecord>> created = store.create(record);
            if (created.isEmpty()) {
                if (scheduled != null) { // another node made the tick's job meanwhile
                    specs.forget(id);
                    return store.get(id).map(v -> scheduledExists(v.value())).orElseThrow(() -> new ConflictException(
                            ConflictException.Reason.JOB_BUSY, "the job of this tick ('" + id + "') is changing; try again"));
                }
                throw new IllegalStateException("job id " + id + " already exists");
            }
            if (!keepsSpecs && !waits) {
                createdHere.put(created.get(), spec, requestBytes); // before its ticket exists: a claim here starts from it
            }
        } catch (RuntimeException e) {
            deps.untrack(id);
            specs.forget(id);
            releaseKey(idempotencyKey, key);
            throw e;
        }
        if (waits) {
            metrics.jobSubmitted(JobType.of(spec));
            return new JobService.Submitted(views.view(resolveQuietly(record)), false);
        }
        try {
            queue.enqueue(new JobTicket(id, 1, spec.priority(), spec.notBefore(), pin));
        } catch (RuntimeException e) {
            // No ticket, no job: take the record back so that nothing waits for ever.
            specs.forget(id);
            createdHere.forget(id);
            store.get(id).ifPresent(v -> store.remove(id, v.revision()));
            releaseKey(idempotencyKey, key);
            throw e;
        }
        metrics.jobSubmitted(JobType.of(spec));
        // a job just made has run no goroutine: no need to look through the runtime's leak reports
        return new JobService.Submitted(views.view(record, Map.<String, Integer>of()), false);
    }

    /** The most jobs one batch may hold. */
    static final int MAX_BATCH = 1_000;

    /** One entry of a batch as checked: its spec, its pin, its request's bytes, and its {@code after} as job ids. */
    private record Entry(JsonNode body, JobSpec spec, String pin, long requestBytes, List<String> after, List<Integer> internal) {}

    /**
     * POST /api/v1/jobs/batch: every job is checked first (each violation named by its pointer
     * into the batch, e.g. {@code /jobs/3/after/0}), then all are admitted or none. {@code after}
     * names another entry's {@code key} or an existing job's id (a key wins over a job id of the
     * same spelling); cycles are refused. The records are created in an order where every job
     * comes after those it waits for (so no node ever resolves a job whose dependency is not
     * stored yet), then the tickets of those that wait for nothing are enqueued. A create or an
     * enqueue that fails midway undoes what was done: the records are removed (by CAS, so one
     * already claimed is cancelled instead) and the tickets withdrawn.
     *
     * @return the jobs' ids, in the order of the entries
     */
    List<String> submitBatch(JsonNode body) {
        shutdown.refuseNewWork();
        JsonInput in = new JsonInput();
        if (!in.object(body, "")) {
            in.throwIfInvalid();
        }
        in.onlyFields(body, "", java.util.Set.of("jobs"));
        JsonNode jobs = in.array(body, "", "jobs", 1, MAX_BATCH, true);
        in.throwIfInvalid();
        int n = jobs.size();
        Instant now = clock.instant();
        List<Violation> violations = new ArrayList<>();
        java.util.Map<String, Integer> keys = new java.util.HashMap<>();
        for (int i = 0; i < n; i++) {
            JsonNode k = jobs.get(i).get("key");
            if (k == null || k.isNull()) {
                continue;
            }
            if (!k.isString() || !JobTicket.isToken(k.asString())) {
                violations.add(new Violation("/jobs/" + i + "/key", "must be 1 to 64 letters, digits, '-' or '_' (what 'after' takes)"));
            } else if (keys.putIfAbsent(k.asString(), i) != null) {
                violations.add(new Violation("/jobs/" + i + "/key", "'" + k.asString() + "' is the key of /jobs/" + keys.get(k.asString())
                        + " already; keys are unique in a batch"));
            }
        }
        Entry[] entries = new Entry[n];
        for (int i = 0; i < n; i++) {
            String at = "/jobs/" + i;
            JsonNode e = jobs.get(i);
            if (!e.isObject()) {
                violations.add(new Violation(at, "must be a job object, was " + JsonInput.kind(e)));
                continue;
            }
            tools.jackson.databind.node.ObjectNode job = ((tools.jackson.databind.node.ObjectNode) e).deepCopy();
            job.remove("key");
            try {
                JobSpec spec = specs.parse(job, now);
                String pointer = at + (spec.template() == null ? "/workload" : "/params");
                String pin = pinning.pin(spec.workload());
                if (spec.workload().goroutines() > admission.maxLiveGoroutines()) {
                    throw new InvalidRequestException(pointer.substring(at.length()), "would start " + spec.workload().goroutines()
                            + " goroutines, more than the service's limit of " + admission.maxLiveGoroutines());
                }
                long bytes = memory.checkShare(spec, pointer.substring(at.length()));
                List<String> after = new ArrayList<>(spec.after().size());
                List<Integer> internal = new ArrayList<>();
                for (int j = 0; j < spec.after().size(); j++) {
                    String a = spec.after().get(j);
                    Integer k = keys.get(a);
                    if (k != null) {
                        internal.add(k);
                        after.add(null); // its id, once assigned
                    } else if (store.summary(a).isEmpty()) {
                        violations.add(new Violation(at + "/after/" + j, "names no job and no key of this batch: '" + a + "'"));
                    } else {
                        after.add(a);
                    }
                }
                entries[i] = new Entry(job, spec, pin, bytes, after, internal);
            } catch (InvalidRequestException x) {
                for (Violation v : x.violations()) {
                    violations.add(new Violation(at + v.pointer(), v.detail()));
                }
            }
        }
        int[] order = topologicalOrder(entries, keys, violations);
        if (!violations.isEmpty()) {
            throw new InvalidRequestException(violations);
        }
        checkRoom(n);
        String[] ids = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = UUID.randomUUID().toString();
        }
        List<String> created = new ArrayList<>(n);
        List<JobTicket> enqueued = new ArrayList<>();
        try {
            for (int i : order) {
                Entry e = entries[i];
                List<String> after = new ArrayList<>(e.after().size());
                int next = 0;
                for (String a : e.after()) {
                    after.add(a != null ? a : ids[e.internal().get(next++)]);
                }
                JobSpec sp = e.spec();
                JsonNode stored = e.body();
                if (!e.internal().isEmpty()) { // the stored body names ids only: it reads as any job's body, on any node
                    stored = withIds(e.body(), keys, ids);
                    sp = specs.parse(stored, now);
                }
                boolean waits = !after.isEmpty();
                JobRecord record = new JobRecord(ids[i], new JobRecord.Spec(stored, sp.name(), sp.template(), sp.priority(),
                        sp.retry().maxAttempts(), sp.timeoutMs(), sp.workload().goroutines(), now, sp.notBefore(), null, null, after,
                        null, null, sp.kind()),
                        waits ? JobRecord.Status.waiting() : JobRecord.Status.queued(now));
                if (keepsSpecs) {
                    specs.remember(ids[i], sp, e.requestBytes());
                }
                if (waits) {
                    deps.track(ids[i], after);
                }
                created.add(ids[i]);
                Optional<Versioned<JobRecord>> made = store.create(record);
                if (made.isEmpty()) {
                    throw new IllegalStateException("job id " + ids[i] + " already exists");
                }
                if (!keepsSpecs && !waits) {
                    createdHere.put(made.get(), sp, e.requestBytes()); // before its ticket exists: a claim here starts from it
                }
            }
            for (int i = 0; i < n; i++) {
                if (entries[i].after().isEmpty()) {
                    JobTicket t = new JobTicket(ids[i], 1, entries[i].spec().priority(), entries[i].spec().notBefore(), entries[i].pin());
                    queue.enqueue(t);
                    enqueued.add(t);
                }
            }
        } catch (RuntimeException e) {
            undo(created, enqueued);
            throw e;
        }
        for (int i = 0; i < n; i++) {
            metrics.jobSubmitted(JobType.of(entries[i].spec()));
            if (entries[i].internal().size() < entries[i].after().size()) { // waits for a job outside the batch, which may have ended
                try {
                    deps.resolve(ids[i]);
                } catch (RuntimeException e) {
                    log.debug("job " + ids[i] + ": first resolution of its dependencies failed; the sweep does it", e);
                }
            }
        }
        return List.of(ids);
    }

    /** {@code body} with every key of the batch in its {@code after} and in its result steps' {@code of} replaced by that entry's id. */
    private static JsonNode withIds(JsonNode body, java.util.Map<String, Integer> keys, String[] ids) {
        tools.jackson.databind.node.ObjectNode b = ((tools.jackson.databind.node.ObjectNode) body).deepCopy();
        tools.jackson.databind.node.ArrayNode after = (tools.jackson.databind.node.ArrayNode) b.get("after");
        for (int j = 0; j < after.size(); j++) {
            Integer k = keys.get(after.get(j).asString());
            if (k != null) {
                after.set(j, ids[k]);
            }
        }
        JsonNode w = b.get("workload");
        if (w != null) {
            renameResults(w.get("steps"), keys, ids);
        }
        return b;
    }

    private static void renameResults(JsonNode steps, java.util.Map<String, Integer> keys, String[] ids) {
        if (steps == null || !steps.isArray()) {
            return;
        }
        for (JsonNode s : steps) {
            if (s instanceof tools.jackson.databind.node.ObjectNode o) {
                if ("result".equals(o.path("op").asString("")) && o.get("of") != null && keys.containsKey(o.get("of").asString(""))) {
                    o.put("of", ids[keys.get(o.get("of").asString())]);
                }
                renameResults(o.get("steps"), keys, ids);
            }
        }
    }

    /**
     * The entries in an order where each comes after the entries it names; a violation at each
     * {@code after} element that takes part in a cycle. Entries that failed their checks (null)
     * are left out.
     */
    private static int[] topologicalOrder(Entry[] entries, java.util.Map<String, Integer> keys, List<Violation> violations) {
        int n = entries.length;
        int[] indegree = new int[n];
        List<List<Integer>> dependents = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            dependents.add(new ArrayList<>());
        }
        for (int i = 0; i < n; i++) {
            if (entries[i] != null) {
                for (int k : entries[i].internal()) {
                    indegree[i]++;
                    dependents.get(k).add(i);
                }
            }
        }
        java.util.ArrayDeque<Integer> ready = new java.util.ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            if (indegree[i] == 0) {
                ready.add(i);
            }
        }
        int[] order = new int[n];
        int done = 0;
        while (!ready.isEmpty()) {
            int i = ready.poll();
            order[done++] = i;
            for (int d : dependents.get(i)) {
                if (--indegree[d] == 0) {
                    ready.add(d);
                }
            }
        }
        if (done < n) { // what is left waits, directly or not, on itself or on such an entry: name the edges of the cycles
            int[] scc = components(entries);
            for (int i = 0; i < n; i++) {
                if (indegree[i] > 0 && entries[i] != null) {
                    List<String> after = entries[i].spec().after();
                    for (int j = 0; j < after.size(); j++) {
                        Integer k = keys.get(after.get(j));
                        if (k != null && scc[k] == scc[i] && entries[k] != null) {
                            violations.add(new Violation("/jobs/" + i + "/after/" + j, "'" + after.get(j)
                                    + "' (/jobs/" + k + ") waits, directly or not, for this job: a cycle"));
                        }
                    }
                }
            }
        }
        return order;
    }

    /** Tarjan's strongly connected components of the entries' {@code after} edges within the batch: each entry's component number. */
    private static int[] components(Entry[] entries) {
        int n = entries.length;
        int[] index = new int[n];
        int[] low = new int[n];
        int[] comp = new int[n];
        boolean[] onStack = new boolean[n];
        java.util.Arrays.fill(index, -1);
        java.util.ArrayDeque<Integer> stack = new java.util.ArrayDeque<>();
        int[] counter = {0, 0};
        for (int i = 0; i < n; i++) {
            if (index[i] < 0) {
                strongConnect(i, entries, index, low, comp, onStack, stack, counter);
            }
        }
        return comp;
    }

    private static void strongConnect(int v, Entry[] entries, int[] index, int[] low, int[] comp, boolean[] onStack,
            java.util.ArrayDeque<Integer> stack, int[] counter) {
        index[v] = low[v] = counter[0]++;
        stack.push(v);
        onStack[v] = true;
        if (entries[v] != null) {
            for (int w : entries[v].internal()) {
                if (index[w] < 0) {
                    strongConnect(w, entries, index, low, comp, onStack, stack, counter);
                    low[v] = Math.min(low[v], low[w]);
                } else if (onStack[w]) {
                    low[v] = Math.min(low[v], index[w]);
                }
            }
        }
        if (low[v] == index[v]) {
            int c = counter[1]++;
            int w;
            do {
                w = stack.pop();
                onStack[w] = false;
                comp[w] = c;
            } while (w != v);
        }
    }

    /** Undoes a batch that failed midway: its tickets withdrawn, its records removed (cancelled if one was claimed meanwhile). */
    private void undo(List<String> created, List<JobTicket> enqueued) {
        for (JobTicket t : enqueued) {
            try {
                queue.withdraw(t);
            } catch (RuntimeException e) {
                log.debug("withdraw of " + t.jobId() + " failed while undoing a batch; its record's removal makes it stale", e);
            }
        }
        for (int i = created.size() - 1; i >= 0; i--) {
            String id = created.get(i);
            deps.untrack(id);
            specs.forget(id);
            createdHere.forget(id);
            try {
                for (int tries = 0; tries < 5; tries++) {
                    Optional<Versioned<JobRecord>> v = store.get(id);
                    if (v.isEmpty() || store.remove(id, v.get().revision())) {
                        break;
                    }
                }
                store.get(id).ifPresent(v -> store.update(id, v, r -> r.status().state() != JobState.RUNNING
                        || r.status().cancelRequested() ? null : r.withStatus(r.status().withCancelRequested())));
            } catch (RuntimeException e) {
                log.warn("job " + id + " of a batch that failed midway could not be removed; it stays", e);
            }
        }
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
