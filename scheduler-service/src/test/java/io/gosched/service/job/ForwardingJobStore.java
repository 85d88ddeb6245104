package io.gosched.service.job;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.Versioned;

/**
 * A store that forwards every call to another: tests override the calls whose answers they bend.
 * It stands for a cluster's store ({@link JobStore#isShared()} true, no exact count of queued
 * records), so the engine runs its cluster protocol over it, whatever store it forwards to.
 */
abstract class ForwardingJobStore implements JobStore {
    final JobStore d;

    ForwardingJobStore(JobStore d) {
        this.d = d;
    }

    @Override
    public Optional<Versioned<JobRecord>> get(String id) {
        return d.get(id);
    }

    @Override
    public Optional<Versioned<JobRecord>> summary(String id) {
        return d.summary(id);
    }

    @Override
    public Optional<Versioned<JobRecord>> create(JobRecord job) {
        return d.create(job);
    }

    @Override
    public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
        return d.replace(next, expectedRevision);
    }

    @Override
    public boolean remove(String id, long expectedRevision) {
        return d.remove(id, expectedRevision);
    }

    @Override
    public List<Versioned<JobRecord>> list() {
        return d.list();
    }

    @Override
    public int evict(int maxFinished, Instant finishedBefore) {
        return d.evict(maxFinished, finishedBefore);
    }

    @Override
    public Optional<Versioned<IdempotencyEntry>> claimKey(String key, IdempotencyEntry entry) {
        return d.claimKey(key, entry);
    }

    @Override
    public Optional<Versioned<IdempotencyEntry>> key(String key) {
        return d.key(key);
    }

    @Override
    public boolean releaseKey(String key, long expectedRevision) {
        return d.releaseKey(key, expectedRevision);
    }

    @Override
    public AutoCloseable watch(String id, Consumer<JobRecord> onChange) {
        return d.watch(id, onChange);
    }

    @Override
    public AutoCloseable watchAll(ChangeListener listener) {
        return d.watchAll(listener);
    }

    @Override
    public void publishProgress(Progress progress) {
        d.publishProgress(progress);
    }

    @Override
    public AutoCloseable watchProgress(String id, Consumer<Progress> onProgress) {
        return d.watchProgress(id, onProgress);
    }

    @Override
    public AutoCloseable watchAllProgress(Consumer<Progress> onProgress) {
        return d.watchAllProgress(onProgress);
    }
}
