package io.gosched.cluster;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.gosched.service.error.BackendUnavailableException;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.JetStreamSubscription;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.support.Status;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * This node's one connection to NATS, and the health the API reads from it.
 *
 * <p>The connection reconnects by itself, for ever, to any server of the URL list; while it is
 * down, {@link #check()} throws {@link BackendUnavailableException} at once (the API answers 503
 * with Retry-After) instead of letting calls wait out their timeouts on a buffer that may never
 * be flushed. Pings every two seconds notice a server that went silent without closing the
 * socket.
 *
 * <p>Thread-safe.
 */
public final class ClusterConnection implements AutoCloseable {

    private static final Log log = LogFactory.getLog(ClusterConnection.class);

    /** What a caller is told to wait before trying again while NATS is unreachable. */
    public static final Duration RETRY_AFTER = Duration.ofSeconds(2);

    /** The state the API reports. */
    public enum State {
        /** Connected: every operation is attempted. */
        UP,
        /** Lost the server, reconnecting: operations fail fast with 503. */
        RECONNECTING,
        /** Closed for good (shutdown). */
        CLOSED
    }

    private final ClusterProperties properties;
    private final String incarnation = UUID.randomUUID().toString();
    private final Connection nc;
    private final JetStream js;
    private final JetStreamManagement jsm;
    private final KeyValueManagement kvm;
    private volatile State state = State.UP;
    private volatile Instant stateSince = Instant.now();
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong disconnects = new AtomicLong();
    private final CopyOnWriteArrayList<Consumer<State>> listeners = new CopyOnWriteArrayList<>();

    private ClusterConnection(ClusterProperties properties, Connection nc) throws IOException {
        this.properties = properties;
        this.nc = nc;
        JetStreamOptions jso = JetStreamOptions.builder().requestTimeout(Duration.ofSeconds(5)).build();
        this.js = nc.jetStream(jso);
        this.jsm = nc.jetStreamManagement(jso);
        this.kvm = nc.keyValueManagement();
    }

    /**
     * Connects, retrying until {@code connect-timeout} passes.
     *
     * @throws IllegalStateException naming the URL and the property when NATS cannot be reached
     */
    public static ClusterConnection connect(ClusterProperties properties) {
        ClusterConnection[] self = new ClusterConnection[1];
        Options options = Options.builder()
                .servers(properties.nats().servers())
                .connectionName("gosched " + properties.nodeId())
                .connectionTimeout(Duration.ofSeconds(2))
                .maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(500))
                .reconnectJitter(Duration.ofMillis(250))
                .pingInterval(Duration.ofSeconds(2))
                .maxPingsOut(3)
                .reportNoResponders()
                .useTimeoutException()
                .connectionListener((conn, event) -> {
                    if (self[0] != null) {
                        self[0].onEvent(event);
                    }
                })
                .errorListener(new Errors())
                .build();
        long deadline = System.nanoTime() + properties.connectTimeout().toNanos();
        Exception last = null;
        do {
            try {
                Connection nc = Nats.connect(options);
                self[0] = new ClusterConnection(properties, nc);
                self[0].requireJetStream(deadline);
                log.info("cluster mode: node " + properties.nodeId() + " connected to NATS " + nc.getConnectedUrl()
                        + " (server " + nc.getServerInfo().getVersion() + ")");
                return self[0];
            } catch (IOException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                last = e;
                break;
            }
            sleep(Duration.ofMillis(500));
        } while (System.nanoTime() - deadline < 0);
        throw new IllegalStateException("gosched.cluster.nats.url: cannot reach NATS at " + properties.nats().url() + " within "
                + properties.connectTimeout().toMillis() + " ms (gosched.cluster.connect-timeout): "
                + (last == null ? "" : last.getMessage()), last);
    }

    /**
     * Fails start-up clearly when the server runs without JetStream (started without -js). A
     * cluster that is still forming (no meta leader yet) answers no JetStream request either, so
     * silence is asked again until the connect deadline before it counts as "JetStream off".
     */
    private void requireJetStream(long deadline) throws InterruptedException {
        for (;;) {
            try {
                jsm.getAccountStatistics();
                return;
            } catch (JetStreamApiException e) {
                closeQuietly();
                throw new IllegalStateException("gosched.cluster.nats.url: NATS at " + properties.nats().url()
                        + " has no JetStream; start nats-server with -js: " + e.getMessage(), e);
            } catch (IOException e) {
                if (System.nanoTime() - deadline >= 0) {
                    closeQuietly();
                    throw new IllegalStateException("gosched.cluster.nats.url: NATS at " + properties.nats().url()
                            + " answers no JetStream requests within " + properties.connectTimeout().toMillis()
                            + " ms (gosched.cluster.connect-timeout); start nats-server with -js, or give its cluster"
                            + " the time to elect a leader", e);
                }
                log.info("cluster mode: NATS answers no JetStream request yet (a cluster electing its leader?); asking again");
                Thread.sleep(250);
            }
        }
    }

    private void onEvent(ConnectionListener.Events event) {
        State next = switch (event) {
            case DISCONNECTED -> State.RECONNECTING;
            case RECONNECTED, CONNECTED -> State.UP;
            case CLOSED -> State.CLOSED;
            default -> null;
        };
        if (event == ConnectionListener.Events.DISCONNECTED) {
            disconnects.incrementAndGet();
            log.warn("cluster mode: lost NATS; reconnecting (API calls that need it answer 503 meanwhile)");
        } else if (event == ConnectionListener.Events.RECONNECTED) {
            reconnects.incrementAndGet();
            log.info("cluster mode: reconnected to NATS " + nc.getConnectedUrl());
        }
        if (next != null && next != state) {
            state = next;
            stateSince = Instant.now();
            listeners.forEach(l -> l.accept(next));
        }
    }

    public ClusterProperties properties() {
        return properties;
    }

    public String nodeId() {
        return properties.nodeId();
    }

    /** This process's start id: tells a restarted node with the same id from its previous life. */
    public String incarnation() {
        return incarnation;
    }

    public Connection nats() {
        return nc;
    }

    public JetStream jetStream() {
        return js;
    }

    public JetStreamManagement management() {
        return jsm;
    }

    public KeyValueManagement keyValueManagement() {
        return kvm;
    }

    public KeyValue keyValue(String bucket) throws IOException {
        return nc.keyValue(bucket);
    }

    public State state() {
        return state;
    }

    public Instant stateSince() {
        return stateSince;
    }

    public long reconnects() {
        return reconnects.get();
    }

    public long disconnects() {
        return disconnects.get();
    }

    /** True while connected. */
    public boolean isUp() {
        return state == State.UP && nc.getStatus() == Connection.Status.CONNECTED;
    }

    /** Calls {@code listener} on every change of {@link #state()}, on a NATS thread. */
    public void onStateChange(Consumer<State> listener) {
        listeners.add(listener);
    }

    /** Fails fast while NATS is unreachable. */
    public void check() {
        if (!isUp()) {
            throw unavailable("NATS is unreachable (" + state.name().toLowerCase() + " since " + stateSince + ")", null);
        }
    }

    /** The exception the API turns into 503 + Retry-After. */
    public BackendUnavailableException unavailable(String message, Throwable cause) {
        return new BackendUnavailableException("NATS at " + properties.nats().url(), message, RETRY_AFTER, cause);
    }

    /**
     * Turns what a NATS call threw into what the ports promise: an interrupt is kept and
     * reported, a timeout or I/O failure means NATS is unreachable.
     */
    public RuntimeException translate(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        if (e instanceof RuntimeException re && !(e instanceof IllegalStateException)) {
            return re;
        }
        String why = e instanceof TimeoutException || e.getCause() instanceof TimeoutException ? "timed out" : e.getMessage();
        return unavailable(what + ": " + why, e);
    }

    @Override
    public void close() {
        // Acks are sent without waiting for the server (NatsJobLease.complete): flush what is
        // still buffered, so a node stopped gracefully leaves no ticket to come back stale.
        if (nc.getStatus() == Connection.Status.CONNECTED) {
            try {
                nc.flush(Duration.ofSeconds(2));
            } catch (TimeoutException e) {
                log.debug("flush before close timed out; unsent acks bring their tickets back stale", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            nc.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void sleep(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * jnats reports through java.util.logging by default; this routes what matters to the
     * application's log and keeps the expected statuses of pull requests (no messages, request
     * expired) out of it.
     */
    private static final class Errors implements ErrorListener {

        @Override
        public void errorOccurred(Connection conn, String error) {
            log.warn("NATS error: " + error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            log.debug("NATS connection exception (the client reconnects by itself)", exp);
        }

        @Override
        public void slowConsumerDetected(Connection conn, io.nats.client.Consumer consumer) {
            log.warn("NATS slow consumer: messages were dropped for " + consumer);
        }

        @Override
        public void pullStatusWarning(Connection conn, JetStreamSubscription sub, Status status) {
            log.trace("NATS pull status " + status);
        }

        @Override
        public void pullStatusError(Connection conn, JetStreamSubscription sub, Status status) {
            log.warn("NATS pull status error " + status);
        }
    }
}
