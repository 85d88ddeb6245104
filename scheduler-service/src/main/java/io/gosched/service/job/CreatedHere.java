package io.gosched.service.job;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.Versioned;

/**
 * Over a shared store: the records this node created, with their parsed specs, until their first
 * claim. The claim of a job accepted here starts from this copy instead of reading the record
 * back and parsing its request again: one round trip to the store and one parse fewer per job
 * (docs/cluster.md, "What a job costs in NATS messages", exchange 6). With one node that is every
 * job; with several, the jobs a node accepted and then pulled itself.
 *
 * <p>The copy is only where the claim starts. Its compare-and-set is on the copy's revision: a
 * record written since (cancelled, passed on, claimed by another node) fails it, and the claim
 * then reads what stands and decides again ({@code JobStore.update}'s loop), as it would have
 * after a read. So the copy may be stale without harm; it is dropped as soon as the store's
 * watch shows a write after the creation ({@link #changed}), so that the usual case of a moved
 * record is a read, not a failed write.
 *
 * <p>Bounded by {@link #MAX_COPIES} and {@link #MAX_BYTES} (the requests' estimated sizes): a job
 * created past them is read back as before. Entries of jobs another node claims go when the
 * watch shows that claim. Thread-safe.
 */
final class CreatedHere {

    /** The most copies kept: a burst of submissions to one node beyond it is read back at claim. */
    static final int MAX_COPIES = 20_000;
    /** The most request bytes (estimated, {@link JobMemory#requestBytes}) the copies hold. */
    static final long MAX_BYTES = 32L << 20;

    /** The record as created, its spec as parsed at submission, and the bytes counted for it. */
    record Copy(Versioned<JobRecord> record, JobSpec spec, long bytes) {}

    private final ConcurrentHashMap<String, Copy> copies = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();

    /** Keeps the creation of job {@code id} if there is room; it waits for a ticket (not for other jobs). */
    void put(Versioned<JobRecord> created, JobSpec spec, long requestBytes) {
        if (copies.size() >= MAX_COPIES || bytes.addAndGet(requestBytes) > MAX_BYTES) {
            bytes.addAndGet(-requestBytes);
            return;
        }
        if (copies.putIfAbsent(created.value().id(), new Copy(created, spec, requestBytes)) != null) {
            bytes.addAndGet(-requestBytes);
        }
    }

    /** Job {@code id}'s copy, no longer kept (its claim starts from it); null if none. */
    Copy take(String id) {
        Copy c = copies.remove(id);
        if (c != null) {
            bytes.addAndGet(-c.bytes());
        }
        return c;
    }

    /** Job {@code id}'s copy, still kept; null if none. */
    Copy peek(String id) {
        return copies.get(id);
    }

    /**
     * The store's watch saw job {@code id} written ({@code record}, null: removed). The echo of
     * the creation itself keeps the copy; any other write makes it stale, and it goes.
     */
    void changed(String id, JobRecord record) {
        Copy c = copies.get(id);
        if (c != null && (record == null || !record.status().equals(c.record().value().status()))) {
            if (copies.remove(id, c)) {
                bytes.addAndGet(-c.bytes());
            }
        }
    }

    /** Job {@code id} will not be claimed from its copy (its creation was undone). */
    void forget(String id) {
        take(id);
    }

    /** How many copies are kept (tests). */
    int size() {
        return copies.size();
    }
}
