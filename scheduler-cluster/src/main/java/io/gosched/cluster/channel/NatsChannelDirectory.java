package io.gosched.cluster.channel;

import io.gosched.service.error.ConflictException;

import java.io.IOException;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.cluster.BucketFeed;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterNodes;
import io.gosched.cluster.Provisioning;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.StorageType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The channel directory on NATS: which node each named channel lives on, in the KV bucket
 * {@code gosched_channels} (created with {@code create}, so a name is unique cluster-wide), and
 * whether a home node is alive (its heartbeat, {@link ClusterNodes}). This node reads the bucket
 * through an index the bucket's watch keeps ({@link BucketFeed}), so that a busy channel costs no JetStream request
 * per operation. Reaching a home is {@link NatsChannelForwarder}'s.
 *
 * <p>Thread-safe. The registry methods block on one KV round trip at most.
 */
public final class NatsChannelDirectory implements ChannelDirectory, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsChannelDirectory.class);
    static final int WRONG_LAST_SEQUENCE = 10071;

    private final ClusterConnection conn;
    private final ClusterNodes nodes;
    private final KeyValue kv;
    private final Map<String, ChannelHome> index = new ConcurrentHashMap<>();
    private final BucketFeed feed;

    private NatsChannelDirectory(ClusterConnection conn, ClusterNodes nodes) throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        this.nodes = nodes;
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the channel directory", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.CHANNELS_BUCKET)
                .description("gosched named channels: name -> home node").maxHistoryPerKey(1).storageType(StorageType.File)
                .replicas(conn.properties().replicas()).maxBucketSize(64L << 20).maximumValueSize(4096).build());
        });
        this.kv = conn.keyValue(ClusterLayout.CHANNELS_BUCKET);
        this.feed = BucketFeed.start(conn, kv, "the channel directory", new BucketFeed.Listener() {
            @Override
            public void put(KeyValueEntry e) {
                String name = ClusterLayout.channelName(e.getKey());
                try {
                    index.put(name, Forwarded.home(e.getValue()));
                } catch (RuntimeException bad) {
                    log.warn("channel " + name + ": unreadable directory entry skipped");
                }
            }

            @Override
            public void removed(KeyValueEntry e) {
                index.remove(ClusterLayout.channelName(e.getKey()));
            }

            @Override
            public void loaded(Set<String> keys) {
                // what the index holds beyond the bucket was deleted while the watch was down; this
                // node's own homes stay (their writes may be on their way)
                Set<String> names = new HashSet<>();
                keys.forEach(k -> names.add(ClusterLayout.channelName(k)));
                index.entrySet().removeIf(h -> !names.contains(h.getKey()) && !localNode().equals(h.getValue().node()));
            }
        });
    }

    /** Creates (or updates) the bucket and loads the directory. */
    public static NatsChannelDirectory start(ClusterConnection conn, ClusterNodes nodes) {
        try {
            return new NatsChannelDirectory(conn, nodes);
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cluster mode: cannot set up the channel directory on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while loading the channel directory", e);
        }
    }

    @Override
    public String localNode() {
        return conn.nodeId();
    }

    @Override
    public String localIncarnation() {
        return conn.incarnation();
    }

    /**
     * Removes the entries this node id left behind in an earlier life: those channels died with
     * that process. Called before this node serves its channels.
     */
    void forgetPreviousLives() {
        for (ChannelHome h : index.values()) {
            if (h.node().equals(conn.nodeId()) && !h.incarnation().equals(conn.incarnation())) {
                deleteIf(h.name(), e -> true);
            }
        }
    }

    // ---------------------------------------------------------------- registry

    @Override
    public ChannelHome register(String name, int capacity, Instant createdAt) {
        conn.check();
        ChannelHome home = new ChannelHome(name, conn.nodeId(), conn.incarnation(), capacity, createdAt);
        try {
            kv.create(ClusterLayout.channelKey(name), Forwarded.encodeHome(home));
            index.put(name, home); // read-your-writes on this node; the feed confirms it
            return home;
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == WRONG_LAST_SEQUENCE) {
                throw new ConflictException(ConflictException.Reason.CHANNEL_EXISTS, "channel '" + name + "' already exists")
                        .with("channel", name);
            }
            throw new IllegalStateException("NATS refused channel '" + name + "': " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("registration of channel '" + name + "'", e);
        }
    }

    /**
     * Removes the entry of {@code name} if the channel lives here, or if its home is gone (a
     * lost channel can be deleted from any node); false if it lives on another running node or
     * does not exist.
     */
    @Override
    public boolean unregister(String name) {
        conn.check();
        return deleteIf(name, h -> (h.node().equals(conn.nodeId()) && h.incarnation().equals(conn.incarnation())) || !isAlive(h));
    }

    private boolean deleteIf(String name, java.util.function.Predicate<ChannelHome> condition) {
        try {
            KeyValueEntry e = kv.get(ClusterLayout.channelKey(name));
            if (e == null || e.getOperation() != KeyValueOperation.PUT || !condition.test(Forwarded.home(e.getValue()))) {
                return false;
            }
            kv.delete(ClusterLayout.channelKey(name), e.getRevision());
            index.remove(name);
            return true;
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == WRONG_LAST_SEQUENCE) {
                return false;
            }
            throw new IllegalStateException("NATS refused the removal of channel '" + name + "': " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("removal of channel '" + name + "'", e);
        }
    }

    /**
     * From this node's index (the bucket's watch) when it knows the name, so that a busy channel
     * does not cost a JetStream request per operation; else a KV read, which sees a channel made
     * on another node a moment ago that the watch has not delivered yet. An index entry is at
     * most the watch's delay old: a channel deleted meanwhile is answered not found by its home.
     */
    @Override
    public Optional<ChannelHome> home(String name) {
        conn.check();
        ChannelHome known = index.get(name);
        if (known != null) {
            return Optional.of(known);
        }
        try {
            KeyValueEntry e = kv.get(ClusterLayout.channelKey(name));
            if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
                return Optional.empty();
            }
            return Optional.of(Forwarded.home(e.getValue()));
        } catch (JetStreamApiException e) {
            throw new IllegalStateException("NATS refused the lookup of channel '" + name + "': " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("lookup of channel '" + name + "'", e);
        }
    }

    @Override
    public List<ChannelHome> list() {
        return index.values().stream().sorted(Comparator.comparing(ChannelHome::name)).toList();
    }

    /** Liveness of a home as last read, for the watchdogs of long waits. */
    private record Liveness(String incarnation, boolean alive, long readAt) {}

    private final Map<String, Liveness> liveness = new ConcurrentHashMap<>();

    private final Map<String, Object> livenessLocks = new ConcurrentHashMap<>();

    /**
     * {@link #isAlive} read at most once per heartbeat per node, however many operations wait on
     * it: the waiters of one node queue behind one read instead of each sending its own (under
     * load a stampede of reads is what slows NATS down).
     */
    boolean isAliveCached(ChannelHome home) {
        Liveness l = freshLiveness(home);
        if (l != null) {
            return l.alive();
        }
        synchronized (livenessLocks.computeIfAbsent(home.node(), n -> new Object())) {
            l = freshLiveness(home);
            if (l != null) {
                return l.alive();
            }
            boolean alive = isAlive(home);
            liveness.put(home.node(), new Liveness(home.incarnation(), alive, System.nanoTime()));
            return alive;
        }
    }

    private Liveness freshLiveness(ChannelHome home) {
        Liveness l = liveness.get(home.node());
        return l != null && l.incarnation().equals(home.incarnation())
                && System.nanoTime() - l.readAt() < conn.properties().heartbeat().toNanos() ? l : null;
    }

    @Override
    public boolean isAlive(ChannelHome home) {
        if (home.node().equals(conn.nodeId())) {
            return home.incarnation().equals(conn.incarnation());
        }
        return nodes.isAlive(home.node(), home.incarnation());
    }

    @Override
    public void checkReachable() {
        conn.check();
    }

    /** Stops following the bucket. */
    @Override
    public void close() {
        feed.close();
    }
}
