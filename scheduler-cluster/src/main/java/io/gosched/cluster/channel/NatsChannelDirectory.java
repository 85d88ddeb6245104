package io.gosched.cluster.channel;

import io.gosched.service.error.ConflictException;

import java.io.IOException;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterNodes;
import io.gosched.cluster.Provisioning;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StorageType;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The channel directory on NATS: which node each named channel lives on, in the KV bucket
 * {@code gosched_channels} (created with {@code create}, so a name is unique cluster-wide), and
 * whether a home node is alive (its heartbeat, {@link ClusterNodes}). This node reads the bucket
 * through an index the bucket's watch keeps, so that a busy channel costs no JetStream request
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
    private final CountDownLatch indexLoaded = new CountDownLatch(1);
    private volatile NatsKeyValueWatchSubscription indexFeed; // replaced on reconnection; guarded by this for writes
    private volatile boolean closed;

    private NatsChannelDirectory(ClusterConnection conn, ClusterNodes nodes) throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        this.nodes = nodes;
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the channel directory", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.CHANNELS_BUCKET)
                .description("gosched named channels: name -> home node").maxHistoryPerKey(1).storageType(StorageType.File)
                .replicas(conn.properties().replicas()).maxBucketSize(64L << 20).maximumValueSize(4096).build());
        });
        this.kv = conn.keyValue(ClusterLayout.CHANNELS_BUCKET);
        this.indexFeed = watch(indexLoaded);
        // The watch is an ephemeral consumer: a NATS server that restarted has forgotten it, and
        // the index would silently stop following the bucket. Each reconnection starts a new one.
        conn.onStateChange(state -> {
            if (state == ClusterConnection.State.UP && !closed) {
                Thread.ofPlatform().name("gosched-chan-rewatch").daemon(true).start(this::rewatch);
            }
        });
    }

    /** A watch of the whole bucket feeding the index; {@code loaded} counts down once it delivered what the bucket held. */
    private NatsKeyValueWatchSubscription watch(CountDownLatch loaded) throws IOException, JetStreamApiException, InterruptedException {
        java.util.Set<String> seen = ConcurrentHashMap.newKeySet();
        return kv.watchAll(new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry e) {
                String name = ClusterLayout.channelName(e.getKey());
                if (e.getOperation() == KeyValueOperation.PUT && e.getValue() != null) {
                    try {
                        index.put(name, Forwarded.home(e.getValue()));
                        seen.add(name);
                    } catch (RuntimeException bad) {
                        log.warn("channel " + name + ": unreadable directory entry skipped");
                    }
                } else {
                    index.remove(name);
                }
            }

            @Override
            public void endOfData() {
                if (loaded.getCount() > 0) {
                    // what the index holds beyond the bucket was deleted while the watch was down
                    index.keySet().removeIf(name -> !seen.contains(name) && !localNode().equals(index.get(name).node()));
                    loaded.countDown();
                }
            }
        });
    }

    /** Replaces the watch after a reconnection. Executed by one short-lived thread per reconnection. */
    private synchronized void rewatch() {
        try {
            if (closed) {
                return;
            }
            try {
                indexFeed.unsubscribe();
            } catch (RuntimeException gone) {
                // the old subscription died with the server
            }
            CountDownLatch loaded = new CountDownLatch(1);
            indexFeed = watch(loaded);
            if (!loaded.await(60, TimeUnit.SECONDS)) {
                log.warn("cluster mode: the channel directory did not reload within 60 s after reconnecting");
            }
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.warn("cluster mode: cannot watch the channel directory again after reconnecting: " + e.getMessage()
                    + "; lookups read NATS, the list may miss channels until the next reconnection");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Creates (or updates) the bucket and loads the directory. */
    public static NatsChannelDirectory start(ClusterConnection conn, ClusterNodes nodes) {
        try {
            NatsChannelDirectory d = new NatsChannelDirectory(conn, nodes);
            if (!d.indexLoaded.await(60, TimeUnit.SECONDS)) {
                d.close();
                throw new IllegalStateException("cluster mode: the channel directory did not load from NATS within 60 s");
            }
            return d;
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
    public synchronized void close() {
        closed = true;
        try {
            indexFeed.unsubscribe();
        } catch (RuntimeException e) {
            // connection already closed
        }
    }
}
