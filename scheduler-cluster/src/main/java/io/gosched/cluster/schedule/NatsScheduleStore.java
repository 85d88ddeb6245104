package io.gosched.cluster.schedule;

import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.cluster.BucketFeed;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.Provisioning;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import io.gosched.service.schedule.spi.ScheduleStore;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.StorageType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Cluster mode's schedules: one KV entry per schedule in {@value ClusterLayout#SCHEDULES_BUCKET}
 * (JSON, readable with {@code nats kv get}), every write a compare-and-set on the entry's
 * revision, which is what lets one node decide each tick. {@link #list} answers from an index fed
 * by a watch of the bucket (the firing thread lists every round); it may lag, which costs a lost
 * compare-and-set and a fresh {@link #get}, never a wrong decision ({@link BucketFeed} keeps it,
 * watching again on every reconnection).
 *
 * <p>Thread-safe. Reads and writes block on NATS for at most the connection's timeouts.
 */
public final class NatsScheduleStore implements ScheduleStore, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsScheduleStore.class);
    /** nats-server's "wrong last sequence": the compare-and-set lost. */
    static final int WRONG_LAST_SEQUENCE = 10071;
    static final JsonMapper JSON = JsonMapper.builder()
            .disable(tools.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    private final ClusterConnection conn;
    private final KeyValue kv;
    /** Revisions only go up in it: a watch that lags never overwrites a write this node saw answered. */
    private final Map<String, Versioned<ScheduleRecord>> index = new ConcurrentHashMap<>();
    private final BucketFeed feed;

    private NatsScheduleStore(ClusterConnection conn) throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        long maxValue = conn.nats().getServerInfo().getMaxPayload();
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the schedules", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.SCHEDULES_BUCKET)
                    .description("gosched schedules: name -> definition and the last tick decided; CAS by revision")
                    .maxHistoryPerKey(1).storageType(StorageType.File).replicas(conn.properties().replicas())
                    .maxBucketSize(256L << 20).maximumValueSize((int) Math.min(Integer.MAX_VALUE, maxValue)).build());
        });
        this.kv = conn.keyValue(ClusterLayout.SCHEDULES_BUCKET);
        this.feed = BucketFeed.start(conn, kv, "the schedules", new BucketFeed.Listener() {
            @Override
            public void put(KeyValueEntry e) {
                try {
                    indexed(new Versioned<>(decode(e.getValue()), e.getRevision()));
                } catch (RuntimeException bad) {
                    log.warn("schedule " + e.getKey() + ": unreadable entry skipped: " + bad.getMessage());
                }
            }

            @Override
            public void removed(KeyValueEntry e) {
                index.computeIfPresent(e.getKey(), (k, cur) -> cur.revision() <= e.getRevision() ? null : cur);
            }

            @Override
            public void loaded(Set<String> keys) {
                index.keySet().retainAll(keys); // deleted while no watch ran
            }
        });
    }

    /** Creates (or updates) the bucket and loads the index. */
    public static NatsScheduleStore start(ClusterConnection conn) {
        try {
            return new NatsScheduleStore(conn);
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cluster mode: cannot set up the schedules on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while loading the schedules", e);
        }
    }

    private void indexed(Versioned<ScheduleRecord> v) {
        index.merge(v.value().name(), v, (cur, nu) -> nu.revision() >= cur.revision() ? nu : cur);
    }

    static byte[] encode(ScheduleRecord r) {
        return JSON.writeValueAsBytes(r);
    }

    static ScheduleRecord decode(byte[] b) {
        return JSON.readValue(b, ScheduleRecord.class);
    }

    @Override
    public Optional<Versioned<ScheduleRecord>> create(ScheduleRecord schedule) {
        byte[] value = encode(schedule);
        long rev = conditional("create of schedule " + schedule.name(), () -> kv.create(schedule.name(), value));
        return written(schedule, rev);
    }

    @Override
    public Optional<Versioned<ScheduleRecord>> get(String name) {
        if (!io.gosched.service.job.spi.JobTicket.isToken(name)) {
            return Optional.empty();
        }
        conn.check();
        try {
            KeyValueEntry e = kv.get(name);
            if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
                return Optional.empty();
            }
            Versioned<ScheduleRecord> v = new Versioned<>(decode(e.getValue()), e.getRevision());
            indexed(v);
            return Optional.of(v);
        } catch (JetStreamApiException e) {
            throw new IllegalStateException("read of schedule " + name + ": NATS refused it: " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("read of schedule " + name, e);
        }
    }

    @Override
    public Optional<Versioned<ScheduleRecord>> replace(ScheduleRecord next, long expectedRevision) {
        byte[] value = encode(next);
        long rev = conditional("update of schedule " + next.name(), () -> kv.update(next.name(), value, expectedRevision));
        return written(next, rev);
    }

    @Override
    public boolean remove(String name, long expectedRevision) {
        boolean removed = conditional("removal of schedule " + name, () -> {
            kv.delete(name, expectedRevision);
            return 0;
        }) >= 0;
        if (removed) {
            index.computeIfPresent(name, (k, cur) -> cur.revision() <= expectedRevision ? null : cur);
        }
        return removed;
    }

    @Override
    public List<Versioned<ScheduleRecord>> list() {
        return index.values().stream().sorted(Comparator.comparing(v -> v.value().name())).toList();
    }

    private Optional<Versioned<ScheduleRecord>> written(ScheduleRecord r, long rev) {
        if (rev < 0) {
            return Optional.empty();
        }
        Versioned<ScheduleRecord> v = new Versioned<>(r, rev);
        indexed(v);
        return Optional.of(v);
    }

    @FunctionalInterface
    private interface ConditionalWrite {
        long write() throws IOException, JetStreamApiException;
    }

    /** The write's revision, or -1 when its compare-and-set lost. */
    private long conditional(String what, ConditionalWrite w) {
        conn.check();
        try {
            return w.write();
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == WRONG_LAST_SEQUENCE) {
                return -1;
            }
            throw new IllegalStateException(what + ": NATS refused it: " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate(what, e);
        }
    }

    @Override
    public void close() {
        feed.close();
    }
}
