package io.gosched.cluster.job;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.gosched.service.error.BackendFullException;
import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.Versioned;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterProperties;
import io.gosched.cluster.Provisioning;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.Subscription;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StorageType;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Job records in the KV bucket {@code gosched_jobs} and Idempotency-Keys in {@code gosched_idem}
 * (file storage, one revision per key, size-limited so NATS cannot be filled).
 *
 * <ul>
 * <li>Compare-and-set is KV {@code update(key, value, revision)}: the server rejects a write
 *     that does not name the key's last revision.</li>
 * <li>An Idempotency-Key is claimed with KV {@code create}, which only one of any number of
 *     racing writers wins, on whichever nodes they run.</li>
 * <li>{@link #list()} and the watches are served from one index per node, fed by a single
 *     {@code watchAll} of the bucket (an ordered consumer that resumes by itself after a
 *     reconnect); {@link #get} reads the bucket itself, so it sees every acknowledged write.</li>
 * <li>One revision per key means a revision superseded before the feed's consumer delivered it
 *     is gone from the stream, and the feed never sees it: the watches follow state, as
 *     {@link JobStore#watch} says, not a log of every write. Keeping history would make every
 *     job cost its request once per transition against {@code max-store-bytes}; the one reader
 *     of a single job's watch ({@code /events}) keeps only the latest state per client anyway.</li>
 * </ul>
 * Thread-safe.
 */
public final class NatsJobStore implements JobStore, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsJobStore.class);
    /** nats-server's "no message found" (errors.json JSNoMessageFoundErr): the leader has no entry for the key. */
    static final int NO_MESSAGE_FOUND = 10037;
    /** As long as the connection's other JetStream requests may take. */
    private static final Duration LEADER_READ_TIMEOUT = Duration.ofSeconds(5);
    /** nats-server's "wrong last sequence": the compare-and-set lost (errors.json JSStreamWrongLastSequenceErrF). */
    static final int WRONG_LAST_SEQUENCE = 10071;

    private final ClusterConnection conn;
    private final KeyValue jobs;
    private final KeyValue idem;
    private final Map<String, Versioned<JobRecord>> index = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<ChangeListener> allListeners = new CopyOnWriteArrayList<>();
    private final Map<String, CopyOnWriteArrayList<Watch>> watches = new ConcurrentHashMap<>();
    private final CountDownLatch indexLoaded = new CountDownLatch(1);
    /** Serializes the index feeds (after a reconnect an old and a new one may overlap). */
    private final Object feedLock = new Object();
    /** The bucket revision the index has seen up to; guarded by feedLock. */
    private long indexRevision;
    private volatile NatsKeyValueWatchSubscription indexFeed;
    private final Dispatcher progress;
    /**
     * This node's writes of records whose echo the watch has not delivered yet, by key: the
     * record and its encoded bytes. The echo of a node's own write carries those bytes again, and
     * decoding them (a full record with its request, three writes per job) was the feed's largest
     * cost on the node that made them (JFR under a flood of one-node cluster jobs:
     * {@code JobRecordCodec.decode} in 8% of the samples). An echo whose bytes are the ones written
     * reuses the record; anything else (another node's write, a write of ours that a later one
     * replaced) is decoded. Bounded by {@link #MAX_OWN_WRITES}: past it, echoes are decoded.
     */
    private final Map<String, OwnWrite> ownWrites = new ConcurrentHashMap<>();
    /** The most own writes awaiting their echo: a few seconds of writes at full speed. */
    static final int MAX_OWN_WRITES = 10_000;

    /** A record this node wrote, as it went out. */
    private record OwnWrite(byte[] bytes, JobRecord record) {}

    private NatsJobStore(ClusterConnection conn) throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        ClusterProperties p = conn.properties();
        long maxValue = conn.nats().getServerInfo().getMaxPayload();
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the job records", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.JOBS_BUCKET)
                .description("gosched job records (JSON), written by compare-and-set")
                .maxHistoryPerKey(1).storageType(StorageType.File).replicas(p.replicas())
                .maxBucketSize(p.maxStoreBytes().toBytes()).maximumValueSize((int) Math.min(Integer.MAX_VALUE, maxValue))
                .build());
        });
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the job records", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.IDEM_BUCKET)
                .description("gosched Idempotency-Keys: sha256(key) -> job id and body hash")
                .maxHistoryPerKey(1).storageType(StorageType.File).replicas(p.replicas())
                .maxBucketSize(Math.max(1 << 20, p.maxStoreBytes().toBytes() / 8)).maximumValueSize(1024)
                .build());
        });
        this.jobs = conn.keyValue(ClusterLayout.JOBS_BUCKET);
        this.idem = conn.keyValue(ClusterLayout.IDEM_BUCKET);
        this.indexFeed = jobs.watchAll(new IndexFeed());
        this.progress = conn.nats().createDispatcher();
        // jnats' watch notices a restarted server only after three missed heartbeats (15 s);
        // resuming from the last revision on every reconnect keeps the index seconds behind at most.
        conn.onStateChange(state -> {
            if (state == ClusterConnection.State.UP) {
                Thread.ofPlatform().name("gosched-index-resume").daemon(true).start(this::resumeIndexFeed);
            }
        });
    }

    /**
     * Resumes the index feed from the last revision seen. Right after a fail-over the stream may
     * still be electing its leader, so it tries for a while before leaving recovery to jnats.
     */
    private void resumeIndexFeed() {
        for (int attempt = 1; attempt <= 20 && conn.isUp(); attempt++) {
            long from;
            synchronized (feedLock) {
                from = indexRevision + 1;
            }
            try {
                NatsKeyValueWatchSubscription old = indexFeed;
                indexFeed = jobs.watchAll(new IndexFeed(), from);
                try {
                    old.unsubscribe();
                } catch (RuntimeException e) {
                    // already gone with the old connection's state
                }
                return;
            } catch (IOException | JetStreamApiException | RuntimeException e) {
                log.debug("resuming the job index from revision " + from + " failed (attempt " + attempt + "): " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            ClusterConnection.sleep(java.time.Duration.ofSeconds(1));
        }
        log.warn("cluster mode: could not resume the job index after a reconnect; jnats' own watch recovery takes over");
    }

    /**
     * Creates (or updates) the buckets and loads this node's index of every job.
     *
     * @throws IllegalStateException when NATS refuses the buckets or the index does not load in time
     */
    public static NatsJobStore start(ClusterConnection conn) {
        NatsJobStore s;
        try {
            s = new NatsJobStore(conn);
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cluster mode: cannot set up the job store on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while setting up the job store", e);
        }
        try {
            if (!s.indexLoaded.await(60, TimeUnit.SECONDS)) {
                s.close();
                throw new IllegalStateException("cluster mode: the job index did not load from NATS within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            s.close();
            throw new IllegalStateException("interrupted while loading the job index", e);
        }
        return s;
    }

    // ---------------------------------------------------------------- records

    @Override
    public Optional<Versioned<JobRecord>> create(JobRecord job) {
        byte[] value = JobRecordCodec.encode(job);
        long rev = writing(job, value, () -> conditional("create of job " + job.id(), () -> jobs.create(job.id(), value)));
        return rev < 0 ? Optional.empty() : Optional.of(new Versioned<>(job, rev));
    }

    /** Runs {@code write} of {@code record} as {@code bytes}, noted as this node's own until its echo (or its failure). */
    private long writing(JobRecord record, byte[] bytes, java.util.function.LongSupplier write) {
        OwnWrite mine = ownWrites.size() < MAX_OWN_WRITES ? new OwnWrite(bytes, record) : null;
        if (mine != null) {
            ownWrites.put(record.id(), mine); // before the write: the echo may come before its PubAck
        }
        boolean written = false;
        try {
            long rev = write.getAsLong();
            written = rev >= 0;
            return rev;
        } finally {
            if (!written && mine != null) {
                ownWrites.remove(record.id(), mine);
            }
        }
    }

    /** The record of a watched entry: this node's own write as it was written, else decoded. */
    private JobRecord recordOf(KeyValueEntry e) {
        OwnWrite mine = ownWrites.get(e.getKey());
        if (mine != null && java.util.Arrays.equals(mine.bytes(), e.getValue())) {
            ownWrites.remove(e.getKey(), mine);
            return mine.record();
        }
        return JobRecordCodec.decode(e.getValue());
    }

    @Override
    public Optional<Versioned<JobRecord>> get(String id) {
        conn.check();
        try {
            KeyValueEntry e = jobs.get(id);
            return versioned(e != null ? e : fromLeader(id));
        } catch (JetStreamApiException e) {
            throw refused("read of job " + id, e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("read of job " + id, e);
        }
    }

    /**
     * The key's latest entry as the bucket stream's leader has it, or null when it has none: asked
     * when a read found no record. A KV get is a direct get, which any replica answers (jnats sets
     * {@code allow_direct} on every bucket), and after a leader change or a server's return a
     * replica catching up answers "no such key" for records acknowledged seconds before. A claim
     * that reads no record hands its ticket back for another look, each a delivery: a ticket whose
     * record stayed unseen that long ran out of deliveries and its accepted job failed as
     * {@code lost} (seen in the NATS fault test). A plain message get ({@code STREAM.MSG.GET},
     * which jnats turns into a direct get for such a stream, hence the request by hand) is
     * answered by the leader only; one round trip more, for misses only.
     */
    private KeyValueEntry fromLeader(String id) throws IOException, JetStreamApiException {
        byte[] request = ("{\"last_by_subj\":\"$KV." + ClusterLayout.JOBS_BUCKET + "." + id + "\"}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Message reply;
        try {
            reply = conn.nats().request("$JS.API.STREAM.MSG.GET.KV_" + ClusterLayout.JOBS_BUCKET, request, LEADER_READ_TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading job " + id + " from the leader", e);
        }
        if (reply == null) {
            throw new IOException("Timeout or no response waiting for the leader of the job records");
        }
        if (reply.isStatusMessage()) {
            throw new IOException("the job records' leader: " + reply.getStatus());
        }
        MessageInfo info = new MessageInfo(reply);
        if (info.hasError()) {
            if (info.getApiErrorCode() == NO_MESSAGE_FOUND) {
                return null;
            }
            info.throwOnHasError();
        }
        return new KeyValueEntry(info);
    }

    @Override
    public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
        byte[] value = JobRecordCodec.encode(next);
        long rev = writing(next, value, () -> conditional("update of job " + next.id(), () -> jobs.update(next.id(), value, expectedRevision)));
        return rev < 0 ? Optional.empty() : Optional.of(new Versioned<>(next, rev));
    }

    @Override
    public boolean remove(String id, long expectedRevision) {
        return conditional("removal of job " + id, () -> {
            jobs.delete(id, expectedRevision);
            return 0;
        }) >= 0;
    }

    /** A KV write that the server refuses when the key is not at the revision it names. */
    @FunctionalInterface
    private interface ConditionalWrite {
        long write() throws IOException, JetStreamApiException;
    }

    /**
     * Runs a compare-and-set write: its new revision, or -1 when the key moved on (another write
     * came first, or the key exists for a create, or is gone).
     */
    private long conditional(String what, ConditionalWrite w) {
        conn.check();
        try {
            return w.write();
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == WRONG_LAST_SEQUENCE) {
                return -1;
            }
            throw refused(what, e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate(what, e);
        }
    }

    @Override
    public List<Versioned<JobRecord>> list() {
        return new ArrayList<>(index.values());
    }

    /** Drops the delete markers retention left behind (older than 30 minutes). Run by the leader now and then. */
    public void compact() {
        conn.check();
        try {
            jobs.purgeDeletes();
            idem.purgeDeletes();
        } catch (IOException | JetStreamApiException | InterruptedException e) {
            throw conn.translate("compaction of the job store", e);
        }
    }

    // ---------------------------------------------------------------- idempotency

    @Override
    public Optional<Versioned<IdempotencyEntry>> claimKey(String key, IdempotencyEntry entry) {
        String k = ClusterLayout.idemKey(key);
        byte[] value = JobRecordCodec.encode(entry);
        // Each lap means the holder was released between our create and our read: bounded by
        // how fast retention can free one key, so a handful of laps is already unheard of.
        for (int lap = 0; lap < 16; lap++) {
            if (conditional("claim of an Idempotency-Key", () -> idem.create(k, value)) >= 0) {
                return Optional.empty();
            }
            Optional<Versioned<IdempotencyEntry>> holder = key(key);
            if (holder.isPresent()) {
                return holder;
            }
        }
        throw new IllegalStateException("Idempotency-Key kept changing hands for 16 claims in a row");
    }

    @Override
    public Optional<Versioned<IdempotencyEntry>> key(String key) {
        conn.check();
        try {
            KeyValueEntry e = idem.get(ClusterLayout.idemKey(key));
            if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
                return Optional.empty();
            }
            return Optional.of(new Versioned<>(JobRecordCodec.decodeEntry(e.getValue()), e.getRevision()));
        } catch (JetStreamApiException e) {
            throw refused("read of an Idempotency-Key", e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("read of an Idempotency-Key", e);
        }
    }

    @Override
    public boolean releaseKey(String key, long expectedRevision) {
        return conditional("release of an Idempotency-Key", () -> {
            idem.delete(ClusterLayout.idemKey(key), expectedRevision);
            return 0;
        }) >= 0;
    }

    // ---------------------------------------------------------------- change streams

    /** One watcher of one job: delivers in revision order, each revision once. */
    private static final class Watch implements AutoCloseable {
        private final Consumer<JobRecord> onChange;
        private final Runnable unregister;
        private long lastRevision; // guarded by this
        private boolean closed; // guarded by this

        Watch(Consumer<JobRecord> onChange, Runnable unregister) {
            this.onChange = onChange;
            this.unregister = unregister;
        }

        synchronized void deliver(JobRecord r, long revision) {
            if (closed || revision <= lastRevision) {
                return;
            }
            lastRevision = revision;
            try {
                onChange.accept(r);
            } catch (RuntimeException e) {
                log.warn("a job watcher failed", e);
            }
        }

        @Override
        public void close() {
            synchronized (this) {
                closed = true;
            }
            unregister.run();
        }
    }

    @Override
    public AutoCloseable watch(String id, Consumer<JobRecord> onChange) {
        CopyOnWriteArrayList<Watch> list = watches.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>());
        Watch[] self = new Watch[1];
        self[0] = new Watch(onChange, () -> watches.computeIfPresent(id, (k, l) -> {
            l.remove(self[0]);
            return l.isEmpty() ? null : l;
        }));
        list.add(self[0]);
        // Registered first, read second: a write between the two is seen by both and delivered once.
        get(id).ifPresent(v -> self[0].deliver(v.value(), v.revision()));
        return self[0];
    }

    @Override
    public AutoCloseable watchAll(ChangeListener listener) {
        allListeners.add(listener);
        return () -> allListeners.remove(listener);
    }

    /** Feeds the index and the watchers. Called on the watch subscription's thread, in revision order. */
    private final class IndexFeed implements KeyValueWatcher {

        @Override
        public void watch(KeyValueEntry e) {
            synchronized (feedLock) {
                if (e.getRevision() <= indexRevision) {
                    return; // seen through the other feed
                }
                indexRevision = e.getRevision();
                apply(e);
            }
        }

        private void apply(KeyValueEntry e) {
            String id = e.getKey();
            JobRecord r = null;
            if (e.getOperation() == KeyValueOperation.PUT && e.getValue() != null) {
                try {
                    r = recordOf(e);
                } catch (RuntimeException bad) {
                    log.warn("job " + id + ": unreadable record at revision " + e.getRevision() + " skipped: " + bad.getMessage());
                    return;
                }
                index.put(id, new Versioned<>(r.summary(), e.getRevision()));
            } else {
                index.remove(id);
                ownWrites.remove(id);
            }
            for (ChangeListener l : allListeners) {
                try {
                    l.changed(id, r);
                } catch (RuntimeException ex) {
                    log.warn("a job change listener failed", ex);
                }
            }
            List<Watch> ws = watches.get(id);
            if (ws != null) {
                for (Watch w : ws) {
                    w.deliver(r, e.getRevision());
                }
            }
        }

        @Override
        public void endOfData() {
            indexLoaded.countDown();
        }
    }

    @Override
    public void publishProgress(Progress p) {
        if (!conn.isUp()) {
            return; // best effort: the next one gets through
        }
        try {
            conn.nats().publish(ClusterLayout.progressSubject(p.jobId()), JobRecordCodec.encode(p));
        } catch (IllegalStateException closed) {
            // dropped, as promised
        }
    }

    @Override
    public AutoCloseable watchProgress(String id, Consumer<Progress> onProgress) {
        Subscription sub = progress.subscribe(ClusterLayout.progressSubject(id), m -> {
            try {
                onProgress.accept(JobRecordCodec.decodeProgress(m.getData()));
            } catch (RuntimeException e) {
                log.debug("unreadable progress of job " + id, e);
            }
        });
        return () -> progress.unsubscribe(sub);
    }

    @Override
    public AutoCloseable watchAllProgress(Consumer<Progress> onProgress) {
        Subscription sub = progress.subscribe(ClusterLayout.progressSubject("*"), m -> {
            try {
                onProgress.accept(JobRecordCodec.decodeProgress(m.getData()));
            } catch (RuntimeException e) {
                log.debug("unreadable progress on " + m.getSubject(), e);
            }
        });
        return () -> progress.unsubscribe(sub);
    }

    /** True once the index holds every job that existed at start-up. */
    public boolean indexLoaded() {
        return indexLoaded.getCount() == 0;
    }

    @Override
    public void close() {
        try {
            indexFeed.unsubscribe();
        } catch (RuntimeException e) {
            // connection already closed
        }
        try {
            conn.nats().closeDispatcher(progress);
        } catch (RuntimeException e) {
            // connection already closed
        }
    }

    private static Optional<Versioned<JobRecord>> versioned(KeyValueEntry e) {
        if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
            return Optional.empty();
        }
        return Optional.of(new Versioned<>(JobRecordCodec.decode(e.getValue()), e.getRevision()));
    }

    /** A refusal by the server: full (429), or a bug of ours (500), never an outage. */
    private RuntimeException refused(String what, JetStreamApiException e) {
        if (NatsJobQueue.isFull(e)) {
            return new BackendFullException("NATS at " + conn.properties().nats().url(), "the cluster's job store is full"
                    + " (gosched.cluster.max-store-bytes = " + conn.properties().maxStoreBytes() + ")", Duration.ofSeconds(5));
        }
        return new IllegalStateException(what + ": NATS refused it: " + e.getMessage(), e);
    }
}
