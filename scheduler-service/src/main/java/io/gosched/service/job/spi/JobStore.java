package io.gosched.service.job.spi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Job records and the idempotency index, readable and writable from every node. Every write of
 * a record is a compare-and-set on its revision, so two nodes moving one job never both win:
 * the job service writes each state transition through {@link #update}.
 *
 * <p>Reads of one job ({@link #get}) see every write acknowledged before them. {@link #list()}
 * and the watches are fed by change streams and may lag behind writes made on other nodes by a
 * few milliseconds.
 *
 * <p>Thread-safe. Methods may block on the network for a bounded time; call them from a platform
 * thread or wrap them (Reactor's boundedElastic), never from a goroutine without
 * {@code Go.syscall}.
 *
 * @see io.gosched.service.job.spi the protocol the job service runs over this store and the queue
 */
public interface JobStore {

    /**
     * Stores a new job.
     *
     * @return the stored record, or empty if a job with this id already exists
     * @throws io.gosched.service.error.BackendFullException when the store is at its size limit
     * @throws io.gosched.service.error.BackendUnavailableException when the store cannot be reached
     */
    Optional<Versioned<JobRecord>> create(JobRecord job);

    /** The job as last written, or empty if there is none (never was, or removed by retention). */
    Optional<Versioned<JobRecord>> get(String id);

    /**
     * The job as last written, as its {@link JobRecord#summary() summary} (no request body): for a
     * caller that needs only the status, where a store can answer it for less than {@link #get}.
     */
    default Optional<Versioned<JobRecord>> summary(String id) {
        return get(id).map(v -> new Versioned<>(v.value().summary(), v.revision()));
    }

    /**
     * Compare-and-set: writes {@code next} only if the job's revision is still
     * {@code expectedRevision}.
     *
     * @return the new version, or empty when another write came first or the job was removed
     */
    Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision);

    /**
     * Applies {@code change} with compare-and-set, reading again and reapplying after every lost
     * race, until it is written or {@code change} declines by returning null (or the same record).
     * {@code change} may run several times and must be free of side effects. The loop is
     * lock-free, not wait-free: each lost race means another writer's change went in.
     *
     * @return the record as it stands after the call, and whether {@code change} was written;
     *         {@code current} is null when the job does not exist
     */
    default Update update(String id, UnaryOperator<JobRecord> change) {
        while (true) {
            Optional<Versioned<JobRecord>> cur = get(id);
            if (cur.isEmpty()) {
                return new Update(null, false);
            }
            JobRecord next = change.apply(cur.get().value());
            if (next == null || next.equals(cur.get().value())) {
                return new Update(cur.get(), false);
            }
            Optional<Versioned<JobRecord>> written = replace(next, cur.get().revision());
            if (written.isPresent()) {
                return new Update(written.get(), true);
            }
            // lost a race with another writer: read the winner's record and decide again
        }
    }

    /** What {@link #update} did. */
    record Update(Versioned<JobRecord> current, boolean applied) {}

    /**
     * {@link #update} starting from {@code known}, the record as the caller last read or wrote it:
     * one write when nobody wrote since (the common case), else the read-and-retry loop. Saves the
     * read the loop would start with. {@code known} null: the plain loop.
     */
    default Update update(String id, Versioned<JobRecord> known, UnaryOperator<JobRecord> change) {
        if (known != null) {
            JobRecord next = change.apply(known.value());
            if (next == null) {
                return update(id, change); // declined on what the caller knew: look at what stands now
            }
            Optional<Versioned<JobRecord>> w = replace(next, known.revision());
            if (w.isPresent()) {
                return new Update(w.get(), true);
            }
        }
        return update(id, change);
    }

    /** Removes the job if its revision is still {@code expectedRevision} (retention). */
    boolean remove(String id, long expectedRevision);

    /** Every job the store holds, as {@link JobRecord#summary() summaries} with their revisions, in no order. */
    List<Versioned<JobRecord>> list();

    /** How many jobs the store holds, finished ones included. */
    default int size() {
        return list().size();
    }

    /**
     * True if other nodes read and write these records too, and they outlive this process (a
     * cluster's store, the default). False for a store in this process's memory (the in-memory
     * one): its jobs live and die with the process, so a stopping node cancels them instead of
     * handing them back, it charges its records to this node's memory budget itself, keeps its
     * own retention bounds, and no other node's lost states need repairing.
     */
    default boolean isShared() {
        return true;
    }

    /**
     * The exact number of records in state {@code queued}, where the store can count them without
     * a round trip (in memory); empty otherwise, and the job service counts the queue's tickets
     * instead.
     */
    default OptionalInt countQueued() {
        return OptionalInt.empty();
    }

    /**
     * Retention: removes the finished jobs beyond the {@code maxFinished} most recently finished,
     * and those finished before {@code finishedBefore}, oldest first, each with its
     * Idempotency-Key. A job that moved meanwhile (a retry) is kept: every removal is a
     * compare-and-set. Safe to run on several nodes at once; in a cluster one node (the leader)
     * runs it.
     *
     * @return how many jobs were removed
     */
    default int evict(int maxFinished, Instant finishedBefore) {
        List<Versioned<JobRecord>> finished = new ArrayList<>();
        for (Versioned<JobRecord> v : list()) {
            if (v.value().status().state().isFinal() && v.value().status().finishedAt() != null) {
                finished.add(v);
            }
        }
        finished.sort(Comparator.comparing((Versioned<JobRecord> v) -> v.value().status().finishedAt())
                .thenComparing(v -> v.value().id()));
        int excess = finished.size() - maxFinished;
        int removed = 0;
        for (Versioned<JobRecord> v : finished) {
            boolean old = v.value().status().finishedAt().isBefore(finishedBefore);
            if (excess <= 0 && !old) {
                break; // the rest are younger and within the count
            }
            excess--;
            if (remove(v.value().id(), v.revision())) {
                removed++;
                String key = v.value().spec().idempotencyKey();
                if (key != null) {
                    key(key).filter(k -> k.value().jobId().equals(v.value().id()))
                            .ifPresent(k -> releaseKey(key, k.revision()));
                }
            }
        }
        return removed;
    }

    // ---------------------------------------------------------------- idempotency index

    /**
     * Creates {@code key -> entry} if the key is free. Of any number of nodes racing on one key,
     * exactly one gets an empty answer; every other gets the winner's entry.
     *
     * @return empty if this call created the key, else the entry that holds it
     */
    Optional<Versioned<IdempotencyEntry>> claimKey(String key, IdempotencyEntry entry);

    /** The entry under {@code key}, or empty. */
    Optional<Versioned<IdempotencyEntry>> key(String key);

    /** Frees {@code key} if its revision is still {@code expectedRevision} (retention, or a claim whose job never got stored). */
    boolean releaseKey(String key, long expectedRevision);

    // ---------------------------------------------------------------- change streams

    /**
     * Calls {@code onChange} with the job's current record (if it exists) and then with later
     * writes, in revision order, until the returned handle is closed. A removal is reported as
     * {@code null}. Callbacks run on a thread of the store's; keep them short.
     *
     * <p>A watch follows the record's state, not a log of its writes: a watcher that keeps up gets
     * every write, but writes that land faster than it receives them may reach it as the latest
     * one only (the cluster store keeps one revision per job, so an intermediate revision
     * superseded before delivery is gone). It never goes back to an older revision, never sees
     * one twice, and always gets the latest.
     */
    AutoCloseable watch(String id, Consumer<JobRecord> onChange);

    /**
     * Writes of every job from now on (no replay of what exists), with its id for removals; per
     * job, with the same promise as {@link #watch}: in revision order, the latest always, an
     * intermediate one only if it was not superseded before delivery.
     */
    AutoCloseable watchAll(ChangeListener listener);

    /** See {@link #watchAll}. */
    @FunctionalInterface
    interface ChangeListener {
        /** @param record the job as written, or null when {@code id} was removed */
        void changed(String id, JobRecord record);
    }

    /**
     * Live counters of a running attempt, sent by its node a few times a second while they move.
     * Best effort: not stored, not replayed to late watchers; {@code /events} shows the latest.
     */
    record Progress(String jobId, int attempt, JobRecord.Counters counters, int liveGoroutines, JobRecord.Report report) {

        /** Progress without a report of the attempt's own. */
        public Progress(String jobId, int attempt, JobRecord.Counters counters, int liveGoroutines) {
            this(jobId, attempt, counters, liveGoroutines, null);
        }
    }

    /** Sends progress of a running attempt to whoever watches it. Never blocks; drops when unreachable. */
    void publishProgress(Progress progress);

    /** Calls {@code onProgress} with every progress message of job {@code id} until closed. */
    AutoCloseable watchProgress(String id, Consumer<Progress> onProgress);

    /**
     * Calls {@code onProgress} with every progress message of every job until closed: what lets a
     * node that does not run a job answer a read of it with its live counters.
     */
    AutoCloseable watchAllProgress(Consumer<Progress> onProgress);
}
