package io.gosched.service.job.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

import io.gosched.service.budget.JsonSize;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.Retained;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.Versioned;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The embedded {@link JobStore}: records in this process's memory, charged to the service's
 * {@link MemoryBudget} as they move, and retained within the {@code gosched.api.retention} bounds
 * by the store itself.
 *
 * <h2>What a record holds of the budget</h2>
 * Its request ({@code requestBytes}, given by the job service, which knows what a parsed request
 * weighs, plus the JSON text this store keeps, {@link #textBytes}) plus its result and error, under {@link Retained#QUEUED_JOBS} while queued,
 * {@link Retained#RUNNING_JOBS} while running and {@link Retained#FINISHED_JOBS} once final; an
 * Idempotency-Key under {@link Retained#IDEMPOTENCY_KEYS}. A new record or key that does not fit
 * is refused with the budget's 429 (after the budget's reclaimers, this store's among them, made
 * what room they could); a record that grows (its result) is never refused. The request body is
 * kept as its JSON text, a few dozen bytes for a small job, and read back into a tree by
 * {@link #get}: the record's estimate stays on the safe side of what the heap holds.
 *
 * <h2>Retention</h2>
 * Finished records queue in the order they finished. Beyond {@code maxFinished} of them the oldest
 * go at once, those finished longer than {@code maxAge} ago go at the next read or write, and
 * under memory pressure the budget takes the oldest first; each with its Idempotency-Key, each
 * counted through {@link Evictions}. An entry whose record moved on meanwhile (a manual retry) is
 * skipped.
 *
 * <h2>Order and atomicity</h2>
 * Every write is a compare-and-set on the record's revision (one counter for the whole store, so
 * revisions of a key only grow). Writes of one job and their notifications run under that job's
 * stripe lock, so watchers see a job's writes in revision order; charges and releases are made
 * outside it, because a charge may run the budget's reclaimers, which remove other jobs. Only the
 * move of a record's bytes to the kind of its new state is made inside, before the state is
 * visible: a move shifts counters and never reclaims. Watch callbacks run
 * on the writing thread: keep them short, and never write to the store from one.
 */
public final class InMemoryJobStore implements JobStore {

    private static final Log log = LogFactory.getLog(InMemoryJobStore.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final JsonSize.Layout L = JsonSize.layout();
    private static final int STRIPES = 64;

    /** Where evictions are counted ({@code gosched_jobs_evicted_total}): {@code reason} is count, age or pressure. */
    @FunctionalInterface
    public interface Evictions {
        void evicted(String reason, int n);
    }

    private final Clock clock;
    private final MemoryBudget budget;
    private final ToLongFunction<JobRecord> requestBytes;
    private final int maxFinished;
    private final Duration maxAge;
    private final Evictions evictions;

    private final ConcurrentHashMap<String, Entry> jobs = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Key> keys = new ConcurrentHashMap<>();
    private final AtomicLong revisions = new AtomicLong();
    /** Records in state queued: moved under the job's stripe, with the write that moves the record. */
    private final AtomicInteger queued = new AtomicInteger();
    private final Object[] stripes = new Object[STRIPES];

    /** Finished records in the order they finished; an entry is stale once its record moved on. */
    private record Retired(String id, long revision, Instant finishedAt) {}

    private final ConcurrentLinkedQueue<Retired> retired = new ConcurrentLinkedQueue<>();
    private final AtomicInteger retiredCount = new AtomicInteger();

    private final ConcurrentHashMap<String, CopyOnWriteArrayList<Consumer<JobRecord>>> watchers = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<ChangeListener> allWatchers = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<String, CopyOnWriteArrayList<Consumer<Progress>>> progressWatchers = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Consumer<Progress>> allProgressWatchers = new CopyOnWriteArrayList<>();

    /**
     * One record as kept: its summary (no request), the request as JSON text, and what it holds
     * of the budget. Immutable: a write replaces the entry, which is what the CAS compares.
     */
    private record Entry(JobRecord summary, byte[] request, long revision, long requestCharge, long resultCharge) {
        Retained kind() {
            return kindOf(summary.status().state());
        }

        long charge() {
            return requestCharge + resultCharge;
        }
    }

    private record Key(Versioned<IdempotencyEntry> entry, long bytes) {}

    /**
     * @param budget        charged for every record and key; null: nothing is charged (tests of the store alone)
     * @param requestBytes  what a new record's request weighs in the budget
     * @param maxFinished   finished records kept at most
     * @param maxAge        finished records older than this are removed
     * @param evictions     told of every removal by retention
     */
    public InMemoryJobStore(Clock clock, MemoryBudget budget, ToLongFunction<JobRecord> requestBytes, int maxFinished, Duration maxAge,
            Evictions evictions) {
        this.clock = clock;
        this.budget = budget;
        this.requestBytes = requestBytes;
        this.maxFinished = maxFinished;
        this.maxAge = maxAge;
        this.evictions = evictions;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
        if (budget != null) {
            budget.addReclaimer(this::evictUnderPressure);
        }
    }

    /** A store that charges nothing and keeps every finished record for a day: for tests of the port. */
    public static InMemoryJobStore unbounded(Clock clock) {
        return new InMemoryJobStore(clock, null, r -> 0, Integer.MAX_VALUE, Duration.ofDays(1), (reason, n) -> {});
    }

    private Object stripe(String id) {
        return stripes[(id.hashCode() & 0x7fffffff) % STRIPES];
    }

    static Retained kindOf(JobState s) {
        return s == JobState.QUEUED || s == JobState.WAITING ? Retained.QUEUED_JOBS : s == JobState.RUNNING ? Retained.RUNNING_JOBS : Retained.FINISHED_JOBS;
    }

    private static long resultBytes(JobRecord.Status s) {
        JobRecord.Failure f = s.error();
        long err = f == null ? 0 : L.object(2, 0) + JsonSize.string(f.pointer()) + JsonSize.string(f.detail());
        JobRecord.Report p = s.progress();
        long progress = p == null ? 0 : L.object(3, 0) + L.object(0, 8) + L.object(0, 12) + JsonSize.string(p.message()); // report, Double, Instant, message
        return JsonSize.of(s.lastReceived()) + err + progress;
    }

    /**
     * What a request's JSON text weighs as this store keeps it (a byte array), on top of the
     * caller's {@code requestBytes}: the job service's charge estimates the parsed request, which
     * its engine keeps for every queued job in embedded mode, so the text is held besides it.
     */
    public static long textBytes(byte[] text) {
        return text == null ? 0 : L.array(text.length, 1);
    }

    /** What an Idempotency-Key weighs: its map node, the key and the job id it names. */
    public static long keyBytes(String key) {
        return L.object(3, 4) + JsonSize.string(key) + L.string(64, true);
    }

    // ---------------------------------------------------------------- records

    @Override
    public Optional<Versioned<JobRecord>> create(JobRecord job) {
        expire();
        if (jobs.containsKey(job.id())) {
            return Optional.empty();
        }
        byte[] body = job.spec().request() == null ? null : JsonText.write(job.spec().request());
        long request = requestBytes.applyAsLong(job) + textBytes(body);
        long result = resultBytes(job.status());
        Retained kind = kindOf(job.status().state());
        if (budget != null) {
            budget.charge(kind, request + result); // 429 naming the budget when it has no room
        }
        boolean stored;
        Entry e;
        synchronized (stripe(job.id())) {
            e = new Entry(job.summary(), body, revisions.incrementAndGet(), request, result);
            stored = jobs.putIfAbsent(job.id(), e) == null;
            if (stored) {
                count(null, job.status().state());
                notify(job.id(), job);
            }
        }
        if (!stored) {
            release(kind, request + result);
            return Optional.empty();
        }
        if (kind == Retained.FINISHED_JOBS) {
            retire(job, e.revision());
        }
        return Optional.of(new Versioned<>(job, e.revision()));
    }

    @Override
    public Optional<Versioned<JobRecord>> get(String id) {
        expire();
        Entry e = jobs.get(id);
        return e == null ? Optional.empty() : Optional.of(new Versioned<>(full(e), e.revision()));
    }

    /** Without reading the request back: the summary is what the entry keeps. */
    @Override
    public Optional<Versioned<JobRecord>> summary(String id) {
        expire();
        Entry e = jobs.get(id);
        return e == null ? Optional.empty() : Optional.of(new Versioned<>(e.summary(), e.revision()));
    }

    /** The record with its request read back from its JSON text. */
    private static JobRecord full(Entry e) {
        if (e.request() == null) {
            return e.summary();
        }
        JobRecord.Spec s = e.summary().spec();
        JsonNode request = JSON.readTree(e.request());
        return new JobRecord(e.summary().id(), s.withRequest(request), e.summary().status());
    }

    @Override
    public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
        String id = next.id();
        Entry cur;
        Entry written;
        synchronized (stripe(id)) {
            cur = jobs.get(id);
            if (cur == null || cur.revision() != expectedRevision) {
                return Optional.empty();
            }
            // The spec never changes: the entry keeps its request as stored at create, so a writer may
            // pass the summary it read (summary(id)) and lose nothing.
            written = new Entry(new JobRecord(id, cur.summary().spec(), next.status()), cur.request(), revisions.incrementAndGet(),
                    cur.requestCharge(), resultBytes(next.status()));
            if (budget != null && cur.kind() != written.kind()) {
                // Before the new state is visible, so that whoever sees a job finished finds its bytes
                // under finished_jobs, not running_jobs. A move only shifts counters: it never runs
                // the reclaimers, so it may happen under the stripe.
                budget.move(cur.kind(), written.kind(), cur.charge());
            }
            jobs.put(id, written);
            count(cur.summary().status().state(), next.status().state());
            notify(id, next);
        }
        // Outside the stripe: a forced charge may run the reclaimers, which remove other jobs.
        Retained to = written.kind();
        if (budget != null) {
            long delta = written.charge() - cur.charge();
            if (delta > 0) {
                budget.force(to, delta); // already held by the job: never refused
            } else {
                budget.release(to, -delta);
            }
        }
        Retained from = cur.kind();
        if (to == Retained.FINISHED_JOBS && from != Retained.FINISHED_JOBS) {
            retire(written.summary(), written.revision());
        } else {
            expire();
        }
        return Optional.of(new Versioned<>(next, written.revision()));
    }

    @Override
    public boolean remove(String id, long expectedRevision) {
        Entry cur;
        synchronized (stripe(id)) {
            cur = jobs.get(id);
            if (cur == null || cur.revision() != expectedRevision) {
                return false;
            }
            jobs.remove(id);
            count(cur.summary().status().state(), null);
            notify(id, null);
        }
        release(cur.kind(), cur.charge());
        return true;
    }

    @Override
    public List<Versioned<JobRecord>> list() {
        expire();
        List<Versioned<JobRecord>> all = new ArrayList<>(jobs.size());
        for (Entry e : jobs.values()) {
            all.add(new Versioned<>(e.summary(), e.revision()));
        }
        return all;
    }

    private void count(JobState from, JobState to) {
        if (from == JobState.QUEUED && to != JobState.QUEUED) {
            queued.decrementAndGet();
        } else if (to == JobState.QUEUED && from != JobState.QUEUED) {
            queued.incrementAndGet();
        }
    }

    /**
     * Records in state {@code queued} now, wherever they wait (in the queue, or pulled by the node
     * and waiting for room): exact, and moved in the same step as the record.
     */
    @Override
    public OptionalInt countQueued() {
        return OptionalInt.of(queued.get());
    }

    /** In this process's memory: its jobs live and die with it. */
    @Override
    public boolean isShared() {
        return false;
    }

    /** Records held now, finished ones included. */
    @Override
    public int size() {
        expire();
        return jobs.size();
    }

    /** Idempotency-Keys held now. */
    public int keyCount() {
        return keys.size();
    }

    private void release(Retained kind, long bytes) {
        if (budget != null) {
            budget.release(kind, bytes);
        }
    }

    // ---------------------------------------------------------------- retention

    private void retire(JobRecord r, long revision) {
        Instant finishedAt = r.status().finishedAt() != null ? r.status().finishedAt() : clock.instant();
        retired.add(new Retired(r.id(), revision, finishedAt));
        retiredCount.incrementAndGet();
        expire();
    }

    /** Removes the oldest finished records beyond the count bound or past the age bound. */
    private void expire() {
        Retired head = retired.peek();
        if (head == null || retiredCount.get() <= maxFinished && !head.finishedAt().isBefore(clock.instant().minus(maxAge))) {
            return; // the common case, without the lock
        }
        Instant oldest = clock.instant().minus(maxAge);
        int byCount = 0;
        int byAge = 0;
        synchronized (retired) {
            while ((head = retired.peek()) != null && (retiredCount.get() > maxFinished || head.finishedAt().isBefore(oldest))) {
                boolean overCount = retiredCount.get() > maxFinished;
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
        if (byCount > 0) {
            evictions.evicted("count", byCount);
        }
        if (byAge > 0) {
            evictions.evicted("age", byAge);
        }
    }

    /** The budget's reclaimer: removes finished records, oldest first, until {@code wanted} bytes came back or none is left. */
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
        if (n > 0) {
            evictions.evicted("pressure", n);
        }
        return freed;
    }

    /**
     * Removes a retired record with its key and returns the budget bytes that came back, or -1 if
     * the entry is stale (the record moved on since). The retention lock is held.
     */
    private long drop(Retired r) {
        Entry cur = jobs.get(r.id());
        if (cur == null || cur.revision() != r.revision()) {
            return -1;
        }
        if (!remove(r.id(), r.revision())) {
            return -1;
        }
        long bytes = cur.charge();
        String key = cur.summary().spec().idempotencyKey();
        if (key != null) {
            Key k = keys.get(key);
            if (k != null && k.entry().value().jobId().equals(r.id()) && keys.remove(key, k)) {
                release(Retained.IDEMPOTENCY_KEYS, k.bytes());
                bytes += k.bytes();
            }
        }
        return bytes;
    }

    @Override
    public int evict(int maxFinished, Instant finishedBefore) {
        // The store keeps its own bounds as records finish; this is for a caller with other bounds.
        int before = jobs.size();
        int removed = JobStore.super.evict(maxFinished, finishedBefore);
        if (removed > 0) {
            log.debug("evicted " + removed + " of " + before + " jobs on request");
        }
        return removed;
    }

    // ---------------------------------------------------------------- idempotency index

    @Override
    public Optional<Versioned<IdempotencyEntry>> claimKey(String key, IdempotencyEntry entry) {
        Key prior = keys.get(key);
        if (prior != null) {
            return Optional.of(prior.entry());
        }
        long bytes = keyBytes(key);
        if (budget != null) {
            budget.charge(Retained.IDEMPOTENCY_KEYS, bytes);
        }
        Key mine = new Key(new Versioned<>(entry, revisions.incrementAndGet()), bytes);
        prior = keys.putIfAbsent(key, mine);
        if (prior != null) {
            release(Retained.IDEMPOTENCY_KEYS, bytes);
            return Optional.of(prior.entry());
        }
        return Optional.empty();
    }

    @Override
    public Optional<Versioned<IdempotencyEntry>> key(String key) {
        Key k = keys.get(key);
        return k == null ? Optional.empty() : Optional.of(k.entry());
    }

    @Override
    public boolean releaseKey(String key, long expectedRevision) {
        Key k = keys.get(key);
        if (k == null || k.entry().revision() != expectedRevision || !keys.remove(key, k)) {
            return false;
        }
        release(Retained.IDEMPOTENCY_KEYS, k.bytes());
        return true;
    }

    // ---------------------------------------------------------------- change streams

    /** Tells the watchers of {@code id} and of all jobs; the job's stripe is held. */
    private void notify(String id, JobRecord r) {
        CopyOnWriteArrayList<Consumer<JobRecord>> ws = watchers.get(id);
        if (ws != null) {
            for (Consumer<JobRecord> w : ws) {
                call(() -> w.accept(r));
            }
        }
        for (ChangeListener l : allWatchers) {
            call(() -> l.changed(id, r));
        }
    }

    private static void call(Runnable callback) {
        try {
            callback.run();
        } catch (RuntimeException e) {
            log.warn("a job watcher failed; the store goes on", e);
        }
    }

    @Override
    public AutoCloseable watch(String id, Consumer<JobRecord> onChange) {
        synchronized (stripe(id)) {
            watchers.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(onChange);
            Entry e = jobs.get(id);
            if (e != null) {
                call(() -> onChange.accept(full(e)));
            }
        }
        return () -> {
            synchronized (stripe(id)) {
                CopyOnWriteArrayList<Consumer<JobRecord>> ws = watchers.get(id);
                if (ws != null) {
                    ws.remove(onChange);
                    if (ws.isEmpty()) {
                        watchers.remove(id, ws);
                    }
                }
            }
        };
    }

    @Override
    public AutoCloseable watchAll(ChangeListener listener) {
        allWatchers.add(listener);
        return () -> allWatchers.remove(listener);
    }

    @Override
    public void publishProgress(Progress progress) {
        CopyOnWriteArrayList<Consumer<Progress>> ws = progressWatchers.get(progress.jobId());
        if (ws != null) {
            for (Consumer<Progress> w : ws) {
                call(() -> w.accept(progress));
            }
        }
        for (Consumer<Progress> w : allProgressWatchers) {
            call(() -> w.accept(progress));
        }
    }

    @Override
    public AutoCloseable watchProgress(String id, Consumer<Progress> onProgress) {
        progressWatchers.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(onProgress);
        return () -> progressWatchers.computeIfPresent(id, (k, ws) -> {
            ws.remove(onProgress);
            return ws.isEmpty() ? null : ws;
        });
    }

    @Override
    public AutoCloseable watchAllProgress(Consumer<Progress> onProgress) {
        allProgressWatchers.add(onProgress);
        return () -> allProgressWatchers.remove(onProgress);
    }
}
