package io.gosched.cluster;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamInfoOptions;
import io.nats.client.api.Subject;
import io.nats.client.api.StorageType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Which nodes are running: each renews its entry in the KV bucket {@code gosched_nodes} every
 * {@code heartbeat}, and the bucket's TTL (three heartbeats) removes the entry of a node that
 * stopped. One node at a time also holds the key {@code leader} the same way; the leader runs the
 * cluster-wide chores (retention).
 *
 * <p>A node id belongs to one running process: a process that finds its id held by another
 * incarnation waits for that entry to expire (a restart after a crash), and refuses to start if
 * it does not (two processes configured with one id).
 *
 * <p>Thread-safe; heartbeats run on a platform thread of their own.
 */
public final class ClusterNodes implements AutoCloseable {

    private static final Log log = LogFactory.getLog(ClusterNodes.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final int WRONG_LAST_SEQUENCE = 10071;

    /**
     * A node's entry.
     *
     * @param handlers  the application's job handlers the node has, sorted; an entry written by a
     *                  node from before handlers were advertised has none (and that node has none)
     */
    public record NodeInfo(String node, String incarnation, Instant startedAt, List<String> handlers) {
        public NodeInfo {
            handlers = handlers == null ? List.of() : List.copyOf(handlers);
        }

        public NodeInfo(String node, String incarnation, Instant startedAt) {
            this(node, incarnation, startedAt, List.of());
        }
    }

    /** The handlers of the present nodes as {@link #list} read them, and when. */
    private record Handlers(Set<String> names, long readAtNanos) {}

    /** Largest entry: a node's id, incarnation and start, and the names of its handlers. */
    static final int MAX_ENTRY_BYTES = 64 * 1024;

    private final ClusterConnection conn;
    private final KeyValue kv;
    private final NodeInfo self;
    /** This node's handler names, read again at every heartbeat (an application may register its handlers late). */
    private final Supplier<Set<String>> ownHandlers;
    private volatile byte[] selfBytes;
    /** The handler names {@link #selfBytes} advertises; executed only by the heartbeat thread after start. */
    private List<String> advertised;
    private volatile Handlers handlers = new Handlers(Set.of(), 0);
    private final Object handlersRead = new Object();
    private final ScheduledExecutorService timer;
    private long revision; // of our own key; executed only by the timer thread after start
    private long leaderRevision; // 0 when not the leader; same thread
    private volatile boolean leader;

    private ClusterNodes(ClusterConnection conn, Supplier<Set<String>> ownHandlers)
            throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        ClusterProperties p = conn.properties();
        Provisioning.retrying(conn.properties().connectTimeout(), "setting up the node registry", () -> {
            Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.NODES_BUCKET)
                .description("gosched nodes: one entry per running node, renewed every heartbeat; and the leader")
                .maxHistoryPerKey(1).storageType(StorageType.File).replicas(p.replicas()).ttl(p.nodeTtl())
                .maxBucketSize(16L << 20).maximumValueSize(MAX_ENTRY_BYTES).build());
        });
        this.kv = conn.keyValue(ClusterLayout.NODES_BUCKET);
        this.ownHandlers = ownHandlers;
        this.self = new NodeInfo(conn.nodeId(), conn.incarnation(), Instant.now(), sorted(ownHandlers.get()));
        this.selfBytes = entry(self);
        this.advertised = self.handlers();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name("gosched-heartbeat").daemon(true).unstarted(r));
    }

    /**
     * Claims this node's id and starts the heartbeat.
     *
     * @throws IllegalStateException when another running process holds the id
     */
    public static ClusterNodes start(ClusterConnection conn) {
        return start(conn, Set::of);
    }

    /**
     * Claims this node's id and starts the heartbeat, advertising the handler names
     * {@code ownHandlers} gives (read again at every heartbeat).
     *
     * @throws IllegalStateException when another running process holds the id
     */
    public static ClusterNodes start(ClusterConnection conn, Supplier<Set<String>> ownHandlers) {
        ClusterNodes n;
        try {
            n = new ClusterNodes(conn, ownHandlers);
            ClusterNodes fresh = n;
            Provisioning.retrying(conn.properties().connectTimeout(), "registering node " + conn.nodeId(), () -> {
                fresh.claim();
            });
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cluster mode: cannot register node " + conn.nodeId() + " on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("cluster mode: interrupted while registering node " + conn.nodeId() + " on NATS", e);
        }
        long ms = conn.properties().heartbeat().toMillis();
        n.timer.scheduleAtFixedRate(n::beat, 0, ms, TimeUnit.MILLISECONDS);
        return n;
    }

    private void claim() throws IOException, JetStreamApiException {
        Duration ttl = conn.properties().nodeTtl();
        long deadline = System.nanoTime() + ttl.multipliedBy(2).plusSeconds(1).toNanos();
        while (true) {
            try {
                revision = kv.create(self.node(), selfBytes);
                return;
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                    throw e;
                }
            }
            Optional<NodeInfo> holder = info(self.node());
            if (holder.isPresent() && holder.get().incarnation().equals(self.incarnation())) {
                // our own create of an earlier try, which committed after its answer timed out
                KeyValueEntry mine = kv.get(self.node());
                if (mine != null) {
                    revision = mine.getRevision();
                    return;
                }
                continue;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("gosched.cluster.node-id: node id '" + self.node() + "' is in use by a running node ("
                        + holder.map(h -> "incarnation " + h.incarnation() + ", started " + h.startedAt()).orElse("?")
                        + "); give every node its own id");
            }
            log.info("cluster mode: node id " + self.node() + " is still held by a previous process; waiting for its entry to expire");
            ClusterConnection.sleep(Duration.ofMillis(250));
        }
    }

    /** One heartbeat: our entry, then the leader key. Executed only by the heartbeat thread. */
    private void beat() {
        if (!conn.isUp()) {
            return;
        }
        try {
            List<String> names = sorted(ownHandlers.get());
            if (!names.equals(advertised)) {
                advertised = names;
                try {
                    selfBytes = entry(new NodeInfo(self.node(), self.incarnation(), self.startedAt(), names));
                } catch (IllegalStateException tooLarge) {
                    // the heartbeat must go on: a node whose entry cannot be written counts as gone
                    log.error(tooLarge.getMessage() + "; the node keeps advertising the handlers it had");
                }
            }
            try {
                revision = kv.update(self.node(), selfBytes, revision);
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                    throw e;
                }
                // our entry expired while we were cut off (or another process took the id)
                Optional<NodeInfo> holder = info(self.node());
                if (holder.isPresent() && !holder.get().incarnation().equals(self.incarnation())) {
                    log.error("cluster mode: node id " + self.node() + " was taken by another process (incarnation "
                            + holder.get().incarnation() + "); give every node its own gosched.cluster.node-id");
                    return;
                }
                revision = kv.create(self.node(), selfBytes);
            }
            leadership();
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.debug("heartbeat failed; the next one tries again", e);
        }
    }

    private void leadership() throws IOException, JetStreamApiException {
        if (leaderRevision != 0) {
            try {
                leaderRevision = kv.update(ClusterLayout.LEADER_KEY, selfBytes, leaderRevision);
                return;
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                    throw e;
                }
                leaderRevision = 0;
                leader = false;
                log.info("cluster mode: node " + self.node() + " is no longer the leader");
            }
        }
        try {
            leaderRevision = kv.create(ClusterLayout.LEADER_KEY, selfBytes);
            leader = true;
            log.info("cluster mode: node " + self.node() + " is the leader");
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != WRONG_LAST_SEQUENCE) {
                throw e;
            }
        }
    }

    public NodeInfo self() {
        return self;
    }

    /** True while this node holds the leader key (for at most one node at a time, give or take one heartbeat). */
    public boolean isLeader() {
        return leader;
    }

    /** The entry of {@code node}, if it is running. */
    public Optional<NodeInfo> info(String node) {
        try {
            KeyValueEntry e = kv.get(node);
            if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
                return Optional.empty();
            }
            return Optional.of(JSON.readValue(e.getValue(), NodeInfo.class));
        } catch (IOException | JetStreamApiException e) {
            throw conn.translate("read of node " + node, e);
        }
    }

    /**
     * True if a present node (this one included) advertises the job handler {@code name}. Reads
     * the registry ({@link #list}: a request per node) at most once a heartbeat; between reads,
     * and while NATS cannot be reached, answers from the last read, so a node that joined or left
     * shows up here about a heartbeat later.
     */
    public boolean hasHandler(String name) {
        long maxAge = conn.properties().heartbeat().toNanos();
        Handlers h = handlers;
        if (h.readAtNanos() == 0 || System.nanoTime() - h.readAtNanos() > maxAge) {
            synchronized (handlersRead) { // one read for every caller that finds it old
                h = handlers;
                if (h.readAtNanos() == 0 || System.nanoTime() - h.readAtNanos() > maxAge) {
                    try {
                        Set<String> names = new HashSet<>();
                        for (NodeInfo n : list()) {
                            names.addAll(n.handlers());
                        }
                        h = new Handlers(Set.copyOf(names), System.nanoTime());
                    } catch (RuntimeException unreachable) {
                        h = new Handlers(h.names(), System.nanoTime()); // try again after a heartbeat
                    }
                    handlers = h;
                }
            }
        }
        return h.names().contains(name);
    }

    private static List<String> sorted(Set<String> names) {
        return names == null ? List.of() : names.stream().sorted().toList();
    }

    /** The entry's bytes; one too large for the bucket stops the start, naming what to shorten. */
    private static byte[] entry(NodeInfo info) {
        byte[] b = JSON.writeValueAsBytes(info);
        if (b.length > MAX_ENTRY_BYTES) {
            throw new IllegalStateException("cluster mode: node " + info.node() + " has " + info.handlers().size()
                    + " job handlers, whose names take more than the node registry keeps per node (" + MAX_ENTRY_BYTES
                    + " bytes in all); use shorter or fewer handler names");
        }
        return b;
    }

    /** True if {@code node} runs as {@code incarnation}. */
    public boolean isAlive(String node, String incarnation) {
        return info(node).map(i -> i.incarnation().equals(incarnation)).orElse(false);
    }

    /**
     * Every running node, each once. The keys come from the bucket's stream state (the subjects
     * that hold a message), one snapshot the server takes, not from the key listing: that listing
     * reads an ordered consumer while heartbeats rewrite the entries, and a key rewritten during
     * the read can come back twice (as nats.go's Keys() did before nats-io/nats.go#1884) or not at
     * all (its message replaced after the consumer's last pending count said it was done), so a
     * node that was running could be listed twice or left out. A subject keeps one message
     * through every rewrite (history 1: the new message is stored before the old one goes).
     */
    public List<NodeInfo> list() {
        List<NodeInfo> out = new ArrayList<>();
        String prefix = "$KV." + ClusterLayout.NODES_BUCKET + ".";
        try {
            StreamInfo info = conn.management().getStreamInfo("KV_" + ClusterLayout.NODES_BUCKET,
                    StreamInfoOptions.filterSubjects(prefix + ">"));
            List<Subject> subjects = info.getStreamState().getSubjects();
            for (Subject subject : subjects == null ? List.<Subject>of() : subjects) {
                String k = subject.getName().substring(prefix.length());
                if (!k.equals(ClusterLayout.LEADER_KEY)) {
                    info(k).ifPresent(out::add);
                }
            }
        } catch (IOException | JetStreamApiException e) {
            throw conn.translate("list of nodes", e);
        }
        return out;
    }

    /** Stops the heartbeat and removes this node's entries, so that others see it gone at once. */
    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!conn.isUp()) {
            return;
        }
        try {
            if (leaderRevision != 0) {
                kv.delete(ClusterLayout.LEADER_KEY, leaderRevision);
            }
            kv.delete(self.node(), revision);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.debug("node entries not removed; they expire by themselves", e);
        }
    }

    /** Stops the heartbeat without removing anything: what a SIGKILL looks like to the others (tests). */
    public void abandon() {
        timer.shutdownNow();
    }
}
