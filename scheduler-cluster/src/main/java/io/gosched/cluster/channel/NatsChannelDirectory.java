package io.gosched.cluster.channel;

import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterNodes;
import io.gosched.cluster.Provisioning;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamStatusException;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StorageType;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * The channel directory on NATS: homes in the KV bucket {@code gosched_channels} (created with
 * {@code create}, so a name is unique cluster-wide), operations forwarded to the home over
 * request-reply on {@code gosched.chan.<node>}.
 *
 * <h2>Forwarding</h2>
 * A call waits up to the operation's timeout plus {@code forward-margin} for the home's reply;
 * without one it asks again with the same request id, {@value #RETRIES} times, a margin each.
 * The home answers a repeated id from its outcome cache ({@link HomeServer}), so a lost reply
 * never makes an operation happen twice. "No responders" (nobody subscribes for that node) or
 * silence past the last retry is then checked against the home's heartbeat:
 * <ul>
 * <li>the home is gone (no heartbeat of that incarnation): {@link GoneException} (the channel is lost) — within one node TTL of a SIGKILL, never a hang;</li>
 * <li>the home is alive but unreachable (reconnecting): no-responders is retried until the
 *     deadline, then {@code BackendUnavailableException} (503). For a send this means
 *     "outcome unknown", never "not sent".</li>
 * </ul>
 * A recv that got a value confirms it to the home once the value is emitted; one whose
 * subscriber cancelled first tells the home to put it back.
 *
 * <h2>This node shutting down</h2>
 * A forwarded send or recv waits on a channel that outlives this node, so graceful shutdown does
 * not cut it off: it keeps waiting through the web server's drain ({@link ForwardedCallsDrain}).
 * Those still waiting when the drain is about to end are {@linkplain #withdrawForwarded()
 * withdrawn} at their homes with the request id: the home cancels the operation if that still
 * wins and answers {@code sent:false} / {@code received:false} (reason "shutdown"), else it
 * answers what the operation did (a value taken is confirmed as usual). So every such call gets
 * its true outcome while the server can still write it, and a value answered not sent is never
 * delivered. The connection closes only after that ({@link #close()} waits for it and flushes).
 *
 * <p>Thread-safe. The forwarding methods block no thread; the registry methods block on one
 * KV round trip.
 */
public final class NatsChannelDirectory implements ChannelDirectory, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsChannelDirectory.class);
    /** Requests with the same id after the first one found no reply in time. */
    static final int RETRIES = 3;
    static final int MAX_PENDING = 100_000;
    static final int WRONG_LAST_SEQUENCE = 10071;

    private final ClusterConnection conn;
    private final ClusterNodes nodes;
    private final KeyValue kv;
    private final Duration margin;
    private final Map<String, ChannelHome> index = new ConcurrentHashMap<>();
    private final CountDownLatch indexLoaded = new CountDownLatch(1);
    private volatile NatsKeyValueWatchSubscription indexFeed; // replaced on reconnection; guarded by this for writes
    private volatile boolean closed;
    private HomeServer server;
    /** This node's forwarded sends and recvs still without an outcome: request id -> its withdrawal. */
    private final Map<String, Runnable> withdrawals = new ConcurrentHashMap<>();
    private volatile boolean withdrawing;
    /** Forwarded sends and recvs of this node's callers that have no outcome yet; its monitor is what waits for zero. */
    private final AtomicInteger forwardedInFlight = new AtomicInteger();

    private NatsChannelDirectory(ClusterConnection conn, ClusterNodes nodes) throws IOException, JetStreamApiException, InterruptedException {
        this.conn = conn;
        this.nodes = nodes;
        this.margin = conn.properties().forwardMargin();
        Provisioning.bucket(conn.keyValueManagement(), KeyValueConfiguration.builder().name(ClusterLayout.CHANNELS_BUCKET)
                .description("gosched named channels: name -> home node").maxHistoryPerKey(1).storageType(StorageType.File)
                .replicas(conn.properties().replicas()).maxBucketSize(64L << 20).maximumValueSize(4096).build());
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
     * Starts serving forwarded operations, after removing the entries this node id left behind
     * in an earlier life: those channels died with that process.
     */
    @Override
    public synchronized void serve(LocalChannels local) {
        if (server != null) {
            throw new IllegalStateException("already serving");
        }
        forgetPreviousLives();
        server = new HomeServer(conn, local, margin.multipliedBy(RETRIES + 3), MAX_PENDING);
        server.start();
    }

    private void forgetPreviousLives() {
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
    private boolean isAliveCached(ChannelHome home) {
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

    // ---------------------------------------------------------------- forwarding

    @Override
    public Mono<ChannelOutcome.Send> send(ChannelHome home, JsonNode value, Duration timeout) {
        Forwarded.Request req = Forwarded.Request.to(home, Forwarded.SEND, timeout.toMillis(), value);
        AtomicBoolean answered = new AtomicBoolean();
        return withdrawable(home, req, timeout)
                .map(r -> {
                    check(home, r);
                    return r.send();
                })
                .doOnSuccess(s -> answered.set(true))
                .doOnError(e -> answered.set(true))
                .doOnCancel(() -> {
                    if (!answered.get()) {
                        tell(home, req.withOp(Forwarded.CANCEL)); // withdraw it if still pending
                    }
                });
    }

    @Override
    public Mono<ChannelOutcome.Recv> recv(ChannelHome home, Duration timeout) {
        Forwarded.Request req = Forwarded.Request.to(home, Forwarded.RECV, timeout.toMillis(), null);
        // Who ends the operation, decided once: the answer (the value is confirmed and handed on)
        // or a cancel (the value, if the home took one, goes back). A cancel racing the answer
        // (the subscriber's timer, a connection closing) must not both return a value and let it
        // through: that value would be received twice.
        AtomicBoolean decided = new AtomicBoolean();
        return withdrawable(home, req, timeout)
                .<ChannelOutcome.Recv>handle((reply, sink) -> {
                    if (!decided.compareAndSet(false, true)) {
                        return; // cancelled first: the value went back, nothing is handed on
                    }
                    ChannelOutcome.Recv r;
                    try {
                        check(home, reply);
                        r = reply.recv();
                    } catch (RuntimeException e) {
                        tell(home, req.withOp(Forwarded.RETURN)); // if the home did take a value, it goes back
                        sink.error(e);
                        return;
                    }
                    if (r.tookValue()) {
                        tell(home, req.withOp(Forwarded.CONFIRM));
                    }
                    sink.next(r);
                })
                .doOnError(e -> {
                    if (decided.compareAndSet(false, true)) {
                        tell(home, req.withOp(Forwarded.RETURN)); // if the home did take a value, it goes back
                    }
                })
                .doOnCancel(() -> {
                    if (decided.compareAndSet(false, true)) {
                        tell(home, req.withOp(Forwarded.RETURN));
                    }
                });
    }

    @Override
    public Mono<Void> close(ChannelHome home) {
        Forwarded.Request req = Forwarded.Request.to(home, Forwarded.CLOSE, null, null);
        return call(home, req, Duration.ZERO).doOnNext(r -> check(home, r)).then();
    }

    @Override
    public Mono<Optional<ChannelOutcome.State>> describe(ChannelHome home) {
        Forwarded.Request req = Forwarded.Request.to(home, Forwarded.DESCRIBE, null, null);
        return call(home, req, Duration.ZERO).map(r -> {
            if (Forwarded.NOT_FOUND.equals(r.status())) {
                return Optional.<ChannelOutcome.State>empty();
            }
            check(home, r);
            return Optional.ofNullable(r.state());
        });
    }

    @Override
    public Mono<Void> delete(ChannelHome home) {
        Forwarded.Request req = Forwarded.Request.to(home, Forwarded.DELETE, null, null);
        return call(home, req, Duration.ZERO).doOnNext(r -> check(home, r)).then();
    }

    @Override
    public Mono<List<ChannelOutcome.State>> states(String node, String incarnation) {
        ChannelHome any = new ChannelHome("*", node, incarnation, 0, Instant.EPOCH);
        return page(any, null, new java.util.ArrayList<>());
    }

    /** One page after another, each a request of its own, until the home says there are no more. */
    private Mono<List<ChannelOutcome.State>> page(ChannelHome any, String after, List<ChannelOutcome.State> into) {
        return call(any, Forwarded.Request.list(any.incarnation(), after), Duration.ZERO).flatMap(r -> {
            check(any, r);
            List<ChannelOutcome.State> got = r.states() == null ? List.of() : r.states();
            into.addAll(got);
            if (Boolean.TRUE.equals(r.more()) && !got.isEmpty()) {
                return page(any, got.getLast().name(), into);
            }
            return Mono.just(into);
        });
    }

    @Override
    public void checkReachable() {
        conn.check();
    }

    /** Turns a reply that is not "ok" into the exception the port promises. */
    private void check(ChannelHome home, Forwarded.Reply r) {
        String n = home.name();
        switch (r.status() == null ? Forwarded.UNKNOWN : r.status()) {
            case Forwarded.OK -> {
            }
            case Forwarded.NOT_FOUND -> throw new NotFoundException("channel", n);
            case Forwarded.CLOSED -> throw ConflictException.channelClosed(n);
            case Forwarded.LOST -> throw lost(home);
            case Forwarded.FULL -> throw new RefusedException(RefusedException.Reason.MEMORY_BUDGET, "node " + home.node()
                    + ", home of channel '" + n + "': " + (r.reason() == null ? "its memory budget has no room for the value" : r.reason()),
                    java.time.Duration.ofSeconds(1)).with("channel", n).with("node", home.node());
            case Forwarded.BUSY -> throw conn.unavailable("the home node " + home.node() + " of channel '" + n
                    + "' holds too many forwarded operations", null);
            default -> throw conn.unavailable("the outcome of the operation on channel '" + n + "' is unknown", null);
        }
    }

    private GoneException lost(ChannelHome home) {
        return GoneException.channelLost(home.name(), "channel '" + home.name() + "' is lost: its home node "
                + home.node() + " is gone, and the channel with it");
    }

    /**
     * A send or recv, registered with its withdrawal while it waits: {@link #withdrawForwarded()}
     * tells its home to withdraw it, and the home answers the operation's own pending request
     * (every request of an id is answered when it settles), so the call ends with its true outcome
     * through the same reply path, never with a guess on this side.
     */
    private Mono<Forwarded.Reply> withdrawable(ChannelHome home, Forwarded.Request req, Duration timeout) {
        return call(home, req, timeout)
                .doOnSubscribe(s -> {
                    forwardedInFlight.incrementAndGet();
                    withdrawals.put(req.id(), () -> tell(home, req.withOp(Forwarded.WITHDRAW)));
                    if (withdrawing) {
                        withdrawals.remove(req.id()).run(); // started after the withdrawal began: withdrawn at once
                    }
                })
                .doFinally(s -> {
                    withdrawals.remove(req.id());
                    if (forwardedInFlight.decrementAndGet() == 0) {
                        synchronized (forwardedInFlight) {
                            forwardedInFlight.notifyAll();
                        }
                    }
                });
    }

    /** Forwarded sends and recvs of this node still without an outcome. */
    public int forwardedInFlight() {
        return forwardedInFlight.get();
    }

    /**
     * Stops waiting for this node's forwarded sends and recvs: each still pending is withdrawn at
     * its home and answered with the outcome the home reports (see the class comment). For
     * shutdown; idempotent.
     */
    public void withdrawForwarded() {
        withdrawing = true;
        for (String id : List.copyOf(withdrawals.keySet())) {
            Runnable w = withdrawals.remove(id);
            if (w != null) {
                w.run();
            }
        }
    }

    /** Waits until no forwarded send or recv of this node is pending, or {@code within} passed; true if none is. */
    public boolean awaitForwarded(Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        synchronized (forwardedInFlight) {
            while (forwardedInFlight.get() > 0) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(forwardedInFlight, left);
            }
        }
        return true;
    }

    /** One operation with its retries; see the class comment. */
    private Mono<Forwarded.Reply> call(ChannelHome home, Forwarded.Request req, Duration opTimeout) {
        byte[] body = Forwarded.encode(req);
        long deadline = System.nanoTime() + opTimeout.plus(margin.multipliedBy(RETRIES + 1)).toNanos();
        return attempt(home, body, opTimeout.plus(margin), 0, deadline);
    }

    private Mono<Forwarded.Reply> attempt(ChannelHome home, byte[] body, Duration wait, int lap, long deadline) {
        return Mono.defer(() -> {
            if (!conn.isUp()) {
                return Mono.error(conn.unavailable("NATS is unreachable; channel '" + home.name() + "' lives on node " + home.node(), null));
            }
            CompletableFuture<Message> f;
            try {
                f = conn.nats().requestWithTimeout(ClusterLayout.channelSubject(home.node()), null, body, wait);
            } catch (IllegalStateException closed) {
                return Mono.error(conn.translate("forwarding to node " + home.node(), closed));
            }
            Mono<Forwarded.Reply> reply = Mono.fromFuture(f).map(m -> Forwarded.reply(m.getData()));
            // A long wait is not left to its own timeout when the home dies meanwhile: its
            // heartbeat is checked every node TTL, and a dead home ends the wait as lost.
            Duration ttl = conn.properties().nodeTtl();
            if (wait.compareTo(ttl) <= 0) {
                return reply;
            }
            // A tick that comes while the last read still runs is dropped (the interval must not
            // overflow), and a read that fails (NATS slow or away) says nothing about the home:
            // the operation waits on, to its reply or its deadline.
            Mono<Forwarded.Reply> homeDied = Flux.interval(ttl, ttl).onBackpressureDrop()
                    .concatMap(tick -> Mono.fromCallable(() -> isAliveCached(home)).subscribeOn(Schedulers.boundedElastic())
                            .onErrorReturn(true), 1)
                    .filter(alive -> !alive).next().flatMap(dead -> Mono.error(lost(home)));
            return Mono.firstWithSignal(reply, homeDied);
        }).onErrorResume(e -> {
            Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            boolean noResponders = c instanceof JetStreamStatusException jse && jse.getStatus() != null && jse.getStatus().isNoResponders();
            boolean silent = c instanceof TimeoutException;
            if (!noResponders && !silent) {
                return Mono.error(c);
            }
            boolean pastDeadline = System.nanoTime() - deadline > 0;
            return Mono.fromCallable(() -> isAlive(home)).subscribeOn(Schedulers.boundedElastic()).flatMap(alive -> {
                if (!alive) {
                    return Mono.error(lost(home));
                }
                if (pastDeadline || (silent && lap >= RETRIES)) {
                    return Mono.error(conn.unavailable("the home node " + home.node() + " of channel '" + home.name()
                            + "' did not answer in time", null));
                }
                Mono<Forwarded.Reply> again = attempt(home, body, margin, silent ? lap + 1 : lap, deadline);
                return noResponders ? Mono.delay(Duration.ofMillis(100)).then(again) : again;
            });
        });
    }

    /** A request without an answer (confirm, return, cancel): best effort, buffered across a reconnect. */
    private void tell(ChannelHome home, Forwarded.Request req) {
        try {
            conn.nats().publish(ClusterLayout.channelSubject(home.node()), Forwarded.encode(req));
        } catch (IllegalStateException closed) {
            // the home's sweep puts an unconfirmed value back by itself
        }
    }

    /** Outcomes the home side holds now (tests). */
    int pendingAtHome() {
        return server == null ? 0 : server.pending();
    }

    /** Values the home side put back so far (tests). */
    long valuesPutBack() {
        return server == null ? 0 : server.valuesPutBack();
    }

    /**
     * Withdraws this node's forwarded operations still pending (the drain normally did it
     * already), waits for their outcomes and pushes out the confirmations of values they got, so
     * that the connection closes with nothing of them left in its buffer; then stops serving this
     * node's own channels (their callers get "shutdown").
     */
    @Override
    public synchronized void close() {
        closed = true;
        withdrawForwarded();
        try {
            if (!awaitForwarded(margin.multipliedBy(2))) {
                log.warn("cluster mode: " + forwardedInFlight() + " forwarded channel operations got no outcome before NATS closes");
            }
            if (conn.isUp()) {
                conn.nats().flush(margin);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException | RuntimeException e) {
            log.debug("flush before close failed", e);
        }
        if (server != null) {
            server.close();
        }
        try {
            indexFeed.unsubscribe();
        } catch (RuntimeException e) {
            // connection already closed
        }
    }
}
