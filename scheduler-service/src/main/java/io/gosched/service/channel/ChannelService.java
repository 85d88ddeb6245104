package io.gosched.service.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import io.gosched.runtime.Chan;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.Received;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.metrics.ServiceMetrics;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * Named channels as HTTP clients use them, wherever a channel lives: on this node
 * ({@link ChannelRegistry}) or, in a cluster, on another node, reached through the
 * {@link ChannelDirectory} (where) and the {@link ChannelForwarder} (how). A node alone has the
 * defaults of {@link SoleNodeChannels}: every channel is its own.
 *
 * <p>Send and receive never block a thread: they use {@code sendAsync}/{@code recvAsync} and give
 * up through {@code future.cancel(false)}, which withdraws the pending operation atomically
 * (docs/channels-and-sync.md, {@code sendAsync} / {@code recvAsync}): if it returns true the value
 * was not delivered (send) or not taken (recv); if false the operation completed and its result
 * stands. On that rule:
 * <ul>
 * <li>a send that times out answers {@code sent:false} only when the withdrawal succeeded, else
 *     it reports the delivery that beat the timer;</li>
 * <li>a receive that times out likewise returns a value that beat the timer;</li>
 * <li>a receive whose client went away after a value was taken puts the value back with
 *     {@code sendAsync}, so it is never swallowed (it may be seen out of order).</li>
 * </ul>
 * A call beyond {@code max-pending-channel-calls} is refused before anything is kept; once the
 * node drains ({@link ServiceShutdown}) new calls are refused and pending ones answer "shutdown".
 * Thread-safe.
 */
public final class ChannelService {

    /** The answer to an HTTP send: {@code reason} is null when sent. */
    public record SendResult(boolean sent, String reason) {}

    /** The answer to an HTTP receive: {@code received} false with a reason, or the value and Go's ok. */
    public record RecvResult(boolean received, JsonNode value, boolean ok, String reason) {}

    private final ChannelRegistry registry;
    private final ChannelDirectory directory;
    private final ChannelForwarder forwarder;
    private final ServiceMetrics metrics;
    private final OpenLimit calls;
    private final ServiceShutdown shutdown;

    public ChannelService(ChannelRegistry registry, ChannelDirectory directory, ChannelForwarder forwarder, ServiceMetrics metrics,
            ServiceBudget budget, ServiceShutdown shutdown) {
        this.registry = registry;
        this.directory = directory;
        this.forwarder = forwarder;
        this.metrics = metrics;
        this.calls = budget.channelCalls();
        this.shutdown = shutdown;
    }

    /** The channels that live on this node. */
    public ChannelRegistry registry() {
        return registry;
    }

    /** How operations reach a channel of another node. */
    public ChannelForwarder forwarder() {
        return forwarder;
    }

    /** Where every node's channels live. */
    public ChannelDirectory directory() {
        return directory;
    }

    /**
     * Sends {@code value}, waiting at most {@code timeout}; see the class comment for what the
     * answer guarantees. Errors: not found, closed, refused when the value does not fit the
     * channel's share or the memory budget or too many channel calls are open, shutting down.
     */
    public Mono<SendResult> send(String name, JsonNode value, Duration timeout) {
        shutdown.refuseNewWork();
        NamedChannel nc = registry.named(name);
        if (nc == null) {
            return remote(name).flatMap(home -> calls.guard(forwarder.send(home, value, timeout)))
                    .map(r -> new SendResult(r.sent(), r.reason()))
                    .doOnSuccess(r -> metrics.channelOp("send", r.sent() ? "ok" : r.reason()))
                    .doOnError(e -> metrics.channelOp("send", failure(e)));
        }
        return calls.guard(Mono.defer(() -> {
            CompletableFuture<Void> f = registry.send(nc, value); // charged to the share; whatever ends the send settles it
            Mono<SendResult> delivered = Mono.fromFuture(f, true)
                    .onErrorResume(CancellationException.class, withdrawn -> Mono.never()) // giveUp answers
                    .then(Mono.fromSupplier(() -> new SendResult(true, null)))
                    .onErrorMap(ChanClosedException.class, e -> ConflictException.channelClosed(name));
            Mono<SendResult> giveUp = giveUpSignal(timeout).flatMap(reason -> {
                if (f.cancel(false)) {
                    return Mono.just(new SendResult(false, reason));
                }
                return delivered; // the send completed before the withdrawal: its result stands
            });
            // Fast path: a send that completed at once (a buffer slot, a waiting receiver) needs no timer.
            // The client went away before its answer went out: withdraw if still pending; if the
            // send already happened there is nothing to undo (it was delivered).
            return AnswerOrGone.of(f.isDone() ? delivered : Mono.firstWithSignal(delivered, giveUp),
                            () -> metrics.channelOp("send", f.cancel(false) ? "withdrawn" : "delivered_unanswered"))
                    .doOnSuccess(r -> {
                        if (r != null) {
                            metrics.channelOp("send", r.sent() ? "ok" : r.reason());
                        }
                    })
                    .doOnError(e -> metrics.channelOp("send", "closed"));
        }));
    }

    /**
     * Receives one value, waiting at most {@code timeout}. {@code ok=false} means the channel is
     * closed and drained (Go's {@code v, ok := <-ch}). Errors: not found, refused when too many
     * channel calls are open (never for want of budget: a receive frees bytes), shutting down.
     */
    public Mono<RecvResult> recv(String name, Duration timeout) {
        shutdown.refuseNewWork();
        NamedChannel nc = registry.named(name);
        if (nc == null) {
            return remote(name).flatMap(home -> calls.guard(forwarder.recv(home, timeout), true))
                    .map(r -> new RecvResult(r.received(), r.value(), r.ok(), r.reason()))
                    .doOnSuccess(r -> metrics.channelOp("recv", r.received() ? (r.ok() ? "ok" : "closed") : r.reason()))
                    .doOnError(e -> metrics.channelOp("recv", failure(e)));
        }
        Chan<Object> ch = nc.chan();
        // A receive frees bytes: a full budget must not refuse it, or the budget could never drain.
        return calls.guard(Mono.defer(() -> {
            CompletableFuture<Received<Object>> f = ch.recvAsync();
            Mono<RecvResult> taken = Mono.fromFuture(f, true)
                    .onErrorResume(CancellationException.class, withdrawn -> Mono.never()) // giveUp answers
                    .map(ChannelService::result);
            Mono<RecvResult> giveUp = giveUpSignal(timeout).flatMap(reason -> {
                if (f.cancel(false)) {
                    return Mono.just(new RecvResult(false, null, false, reason));
                }
                return taken; // a value arrived before the withdrawal: return it, never drop it
            });
            // A value taken goes out as the answer, or back into the channel because the client
            // went away first (AnswerOrGone): never both.
            return AnswerOrGone.of(f.isDone() ? taken : Mono.firstWithSignal(taken, giveUp), () -> {
                        if (f.cancel(false)) {
                            metrics.channelOp("recv", "withdrawn");
                            return;
                        }
                        // Taken, but the client is gone: put the value back rather than swallow it.
                        Received<Object> r = f.getNow(null);
                        if (r != null && r.ok()) {
                            HeldValue.take(r.value());
                            Object back = r.value() instanceof HeldValue h ? h.requeue() : r.value();
                            ch.sendAsync(back).whenComplete((v, e) -> {
                                if (back instanceof HeldValue h) {
                                    if (e == null) {
                                        h.buffered();
                                    } else {
                                        h.withdraw();
                                    }
                                }
                                metrics.channelOp("recv", e == null ? "requeued" : "lost");
                            });
                        }
                    })
                    .doOnSuccess(r -> {
                        if (r != null) {
                            metrics.channelOp("recv", r.received() ? (r.ok() ? "ok" : "closed") : r.reason());
                        }
                    });
        }), true);
    }

    // ---------------------------------------------------------------- wherever the channel lives

    /**
     * POST /channels: made here and recorded in the directory, so that it exists once in the
     * cluster (a conflict if any node has it; backend unavailable while the directory cannot be
     * reached, and then nothing was made). Off the caller's thread: the directory may block.
     */
    public Mono<ChannelView> open(String name, int capacity) {
        return Mono.fromCallable(() -> {
            NamedChannel ch = registry.create(name, capacity);
            try {
                directory.register(name, capacity, ch.createdAt());
            } catch (RuntimeException e) {
                registry.discard(ch);
                if (e instanceof ConflictException ce && ce.reason() == ConflictException.Reason.CHANNEL_EXISTS) {
                    throw new ConflictException(ConflictException.Reason.CHANNEL_EXISTS, "channel '" + name + "' already exists on another node")
                            .with("channel", name);
                }
                throw e;
            }
            return registry.view(ch);
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /** GET /channels/{name}: the state, here or on its home (gone if the home is). */
    public Mono<ChannelView> describe(String name) {
        NamedChannel nc = registry.named(name);
        if (nc != null) {
            return Mono.fromSupplier(() -> registry.view(nc));
        }
        return remote(name).flatMap(home -> forwarder.describe(home).map(state -> state
                .map(st -> ChannelView.of(st, home.node())).orElseThrow(() -> new NotFoundException("channel", name))));
    }

    /** POST /channels/{name}/close: closes it, here or on its home, and answers its state. */
    public Mono<ChannelView> closeChannel(String name) {
        NamedChannel nc = registry.named(name);
        if (nc != null) {
            return Mono.fromSupplier(() -> {
                registry.close(name);
                return registry.view(registry.get(name));
            });
        }
        return remote(name).flatMap(home -> forwarder.close(home)
                .doOnSuccess(v -> metrics.channelOp("close", "ok"))
                .doOnError(e -> metrics.channelOp("close", failure(e)))
                .then(forwarder.describe(home))
                .map(state -> state.map(st -> ChannelView.of(st, home.node())).orElseThrow(() -> new NotFoundException("channel", name))));
    }

    /**
     * DELETE /channels/{name}: here, or on its home; a lost channel (its home is gone) is removed
     * from the directory by whichever node is asked.
     */
    public Mono<Void> remove(String name) {
        if (registry.holds(name)) {
            return Mono.<Void>fromRunnable(() -> registry.delete(name)).subscribeOn(Schedulers.boundedElastic());
        }
        return Mono.fromCallable(() -> {
            Optional<ChannelHome> home = directory.home(name);
            if (home.isEmpty()) {
                throw new NotFoundException("channel", name);
            }
            if (!directory.isAlive(home.get())) {
                if (!directory.unregister(name)) {
                    throw new NotFoundException("channel", name); // someone else removed it meanwhile
                }
                return Optional.<ChannelHome>empty();
            }
            return home;
        }).subscribeOn(Schedulers.boundedElastic()).flatMap(home -> home.map(forwarder::delete).orElse(Mono.empty()));
    }

    /**
     * GET /channels: this node's channels and every other node's, each with its home
     * {@code node}: one request per node (not per channel); channels of a node that is gone are
     * shown {@code lost}. Backend unavailable while the directory cannot be reached.
     */
    public Mono<List<ChannelView>> listAll() {
        return Mono.fromCallable(() -> {
            directory.checkReachable();
            return directory.list();
        }).subscribeOn(Schedulers.boundedElastic()).flatMap(homes -> {
            Map<List<String>, List<ChannelHome>> byHome = new LinkedHashMap<>();
            for (ChannelHome h : homes) {
                if (h.node().equals(directory.localNode()) && h.incarnation().equals(directory.localIncarnation())) {
                    continue; // this node's own channels come from its registry, as they are now
                }
                byHome.computeIfAbsent(List.of(h.node(), h.incarnation()), k -> new ArrayList<>()).add(h);
            }
            return Flux.fromIterable(byHome.entrySet())
                    .flatMap(e -> forwarder.states(e.getKey().get(0), e.getKey().get(1))
                            .map(states -> states.stream().map(st -> ChannelView.of(st, e.getKey().get(0))).toList())
                            .onErrorResume(GoneException.class, lost -> Mono.just(e.getValue().stream().map(ChannelView::lost).toList())))
                    .collectList()
                    .map(remote -> {
                        List<ChannelView> all = new ArrayList<>(registry.list());
                        remote.forEach(all::addAll);
                        all.sort(Comparator.comparing(ChannelView::name));
                        return all;
                    });
        });
    }

    /**
     * The home of a channel this node does not hold: not found when no node has it, gone when
     * the directory names this node's previous life. The lookup may be a read of the directory,
     * run off the caller's thread.
     */
    private Mono<ChannelHome> remote(String name) {
        return Mono.fromCallable(() -> directory.home(name)).subscribeOn(Schedulers.boundedElastic()).flatMap(found -> {
            if (found.isEmpty()) {
                return Mono.error(new NotFoundException("channel", name));
            }
            ChannelHome home = found.get();
            if (home.node().equals(directory.localNode())) {
                if (home.incarnation().equals(directory.localIncarnation())) {
                    // recorded here but not in the registry: made or deleted a moment ago
                    return registry.holds(name) ? Mono.just(home) : Mono.error(new NotFoundException("channel", name));
                }
                return Mono.error(GoneException.channelLost(name, "channel '" + name
                        + "' is lost: it lived on this node before it restarted"));
            }
            return Mono.just(home);
        });
    }

    /** The metric outcome of a failed forwarded operation. */
    private static String failure(Throwable e) {
        return switch (e) {
            case NotFoundException nf -> "not_found";
            case ConflictException c when c.reason() == ConflictException.Reason.CHANNEL_CLOSED -> "closed";
            case ConflictException c when c.reason() == ConflictException.Reason.CHANNEL_EXISTS -> "exists";
            case GoneException lost -> "lost";
            case BackendUnavailableException u -> "unavailable";
            default -> "refused";
        };
    }

    /** Emits "timeout" after {@code timeout}, or "shutdown" when the node starts draining. */
    private Mono<String> giveUpSignal(Duration timeout) {
        return Mono.firstWithValue(Mono.delay(timeout).thenReturn("timeout"), shutdown.draining().thenReturn("shutdown"));
    }

    /**
     * The node starts draining: every pending HTTP send and receive is answered ("shutdown") so
     * that graceful shutdown can drain, and new ones are refused. The node's one shutdown state
     * ({@link ServiceShutdown}) moves, so the job service drains too.
     */
    public void beginShutdown() {
        shutdown.advance(ServiceShutdown.State.DRAINING);
    }

    /** The answer for a value taken out of the channel; its bytes go back to the budget (once, however often this runs). */
    private static RecvResult result(Received<Object> r) {
        return new RecvResult(true, r.ok() ? HeldValue.take(r.value()) : null, r.ok(), null);
    }
}
