package io.gosched.cluster.channel;

import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.service.channel.spi.LocalSelect;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.nats.client.JetStreamStatusException;
import io.nats.client.Message;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * Channel operations carried to a channel's home over NATS request-reply on
 * {@code gosched.chan.<node>}, and this node's own channels served to the others
 * ({@link HomeServer}); where a channel lives is {@link NatsChannelDirectory}'s.
 *
 * <h2>Forwarding</h2>
 * A call waits up to the operation's timeout plus {@code forward-margin} for the home's reply;
 * without one it asks again with the same request id, {@value #RETRIES} times, a margin each.
 * The home answers a repeated id from its outcome cache ({@link HomeServer}), so a lost reply
 * never makes an operation happen twice. "No responders" (nobody subscribes for that node) or
 * silence past the last retry is then checked against the home's heartbeat:
 * <ul>
 * <li>the home is gone (no heartbeat of that incarnation): {@link GoneException} (the channel is
 *     lost), within one node TTL of a SIGKILL, never a hang;</li>
 * <li>the home is alive but unreachable (reconnecting): no-responders is retried until the
 *     deadline, then {@code BackendUnavailableException}. For a send this means "outcome
 *     unknown", never "not sent".</li>
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
 * <p>Thread-safe; no method blocks a thread but {@link #close()} and {@link #awaitForwarded}.
 */
public final class NatsChannelForwarder implements ChannelForwarder, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsChannelForwarder.class);
    /** Requests with the same id after the first one found no reply in time. */
    static final int RETRIES = 3;
    static final int MAX_PENDING = 100_000;

    private final ClusterConnection conn;
    private final NatsChannelDirectory directory;
    private final Duration margin;
    private HomeServer server; // guarded by this
    private LocalSelect selects; // guarded by this; set before serve
    /** This node's forwarded sends and recvs still without an outcome: request id -> its withdrawal. */
    private final Map<String, Runnable> withdrawals = new ConcurrentHashMap<>();
    private volatile boolean withdrawing;
    /** Forwarded sends and recvs of this node's callers that have no outcome yet; its monitor is what waits for zero. */
    private final AtomicInteger forwardedInFlight = new AtomicInteger();

    public NatsChannelForwarder(ClusterConnection conn, NatsChannelDirectory directory) {
        this.conn = conn;
        this.directory = directory;
        this.margin = conn.properties().forwardMargin();
    }

    /**
     * Starts serving forwarded operations on {@code local}, after the directory removed the
     * entries this node id left behind in an earlier life: those channels died with that process.
     */
    @Override
    public synchronized void serve(LocalChannels local) {
        if (server != null) {
            throw new IllegalStateException("already serving");
        }
        directory.forgetPreviousLives();
        server = new HomeServer(conn, local, selects, margin.multipliedBy(RETRIES + 3), MAX_PENDING);
        server.start();
    }

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
    public synchronized void serveSelects(LocalSelect selects) {
        if (server != null) {
            throw new IllegalStateException("selects must be served before the channels are");
        }
        this.selects = selects;
    }

    /**
     * A select whose channels all live on {@code home}'s node, run there as one select; the same
     * protocol as {@link #recv}: a value a case took is confirmed once handed on, and goes back
     * when the caller cancels first. A not-found or closed reply names its channel in "reason".
     */
    @Override
    public Mono<ChannelOutcome.Select> select(ChannelHome home, List<ChannelOutcome.SelectCase> cases, Duration timeout) {
        Forwarded.Request req = Forwarded.Request.select(home, timeout.toMillis(), cases);
        AtomicBoolean decided = new AtomicBoolean(); // who ends it, the answer or a cancel: see recv
        return withdrawable(home, req, timeout)
                .<ChannelOutcome.Select>handle((reply, sink) -> {
                    if (!decided.compareAndSet(false, true)) {
                        return;
                    }
                    ChannelOutcome.Select r;
                    try {
                        boolean named = reply.reason() != null
                                && (Forwarded.NOT_FOUND.equals(reply.status()) || Forwarded.CLOSED.equals(reply.status()));
                        check(named ? new ChannelHome(reply.reason(), home.node(), home.incarnation(), 0, home.createdAt()) : home, reply);
                        r = reply.select();
                    } catch (RuntimeException e) {
                        tell(home, req.withOp(Forwarded.RETURN));
                        sink.error(e);
                        return;
                    }
                    if (r.tookValue(cases)) {
                        tell(home, req.withOp(Forwarded.CONFIRM));
                    }
                    sink.next(r);
                })
                .doOnError(e -> {
                    if (decided.compareAndSet(false, true)) {
                        tell(home, req.withOp(Forwarded.RETURN));
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
                    .concatMap(tick -> Mono.fromCallable(() -> directory.isAliveCached(home)).subscribeOn(Schedulers.boundedElastic())
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
            return Mono.fromCallable(() -> directory.isAlive(home)).subscribeOn(Schedulers.boundedElastic()).flatMap(alive -> {
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
    synchronized int pendingAtHome() {
        return server == null ? 0 : server.pending();
    }

    /** Values the home side put back so far (tests). */
    synchronized long valuesPutBack() {
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
    }
}
