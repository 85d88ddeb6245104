package io.gosched.service.channel;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ByteShare;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.JsonSize;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;
import io.gosched.service.error.ShuttingDownException;
import io.gosched.runtime.Chan;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.Received;
import com.fasterxml.jackson.annotation.JsonInclude;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;

/**
 * The named channels jobs and HTTP clients share: {@code Chan<Object>} holding JSON values.
 *
 * <p>HTTP send and receive never block a thread: they use {@code sendAsync}/{@code recvAsync}
 * and give up through {@code future.cancel(false)}, which withdraws the pending operation
 * atomically (docs/channels-and-sync.md, {@code sendAsync} / {@code recvAsync}): if it returns true the value was not delivered (send) or not taken
 * (recv); if false the operation completed and its result stands. On that rule:
 * <ul>
 * <li>a send that times out answers {@code sent:false} only when the withdrawal succeeded, else
 *     it reports the delivery that beat the timer;</li>
 * <li>a receive that times out likewise returns a value that beat the timer;</li>
 * <li>a receive whose client went away after a value was taken puts the value back with
 *     {@code sendAsync}, so it is never swallowed (it may be seen out of order).</li>
 * </ul>
 *
 * <h2>Memory</h2>
 * A channel's slot array is charged to the memory budget when it is made, and each value that
 * enters it travels as a {@link HeldValue} charged to the channel's {@link ByteShare}: as a
 * pending send while its HTTP sender waits, as the channel's once the send completed, released
 * by whoever takes it out (an HTTP receive or a job). A send that does not fit the channel's
 * share or the budget is refused with 429 before anything is kept; so is a call beyond
 * {@code max-pending-channel-calls}. DELETE discards what is still buffered and returns its bytes.
 * Thread-safe.
 */
public final class ChannelService {

    /**
     * A named channel and what the API remembers about it.
     *
     * @param share        its values' share of the memory budget
     * @param bufferBytes  what its slot array and the channel itself were charged when it was made
     */
    public record NamedChannel(String name, int capacity, Instant createdAt, Chan<Object> chan, ByteShare share, long bufferBytes) {}

    /**
     * The state of a channel as GET shows it.
     *
     * @param bytes     what its buffered values and pending HTTP sends hold of the memory budget
     * @param maxBytes  its share ({@code gosched.api.limits.max-channel-bytes})
     */
    public record ChannelView(String name, int capacity, int len, boolean closed, int waitingSenders, int waitingReceivers,
            Instant createdAt, long bytes, long maxBytes,
            @JsonInclude(JsonInclude.Include.NON_NULL) String node,
            @JsonInclude(JsonInclude.Include.NON_NULL) Boolean lost) {

        /** A channel of this node (embedded mode: {@code node} is null and not shown). */
        static ChannelView local(String name, int capacity, int len, boolean closed, int waitingSenders, int waitingReceivers,
                Instant createdAt, long bytes, long maxBytes, String node) {
            return new ChannelView(name, capacity, len, closed, waitingSenders, waitingReceivers, createdAt, bytes, maxBytes, node, null);
        }

        /** A channel of another node, as its home described it. */
        static ChannelView of(ChannelOutcome.State s, String node) {
            return new ChannelView(s.name(), s.capacity(), s.len(), s.closed(), s.waitingSenders(), s.waitingReceivers(), s.createdAt(),
                    s.bytes(), s.maxBytes(), node, null);
        }

        /** A channel whose home is gone: what the directory still knows of it. */
        static ChannelView lost(ChannelHome h) {
            return new ChannelView(h.name(), h.capacity(), 0, true, 0, 0, h.createdAt(), 0, 0, h.node(), true);
        }
    }

    /**
     * A channel without its buffer: the {@code Chan}, its lock and wait queues, the registry's
     * record and map entry, the share. An estimate rounded up, as {@link JsonSize}'s are.
     */
    public static final long CHANNEL_BYTES = 512;

    /** The answer to an HTTP send: {@code reason} is null when sent. */
    public record SendResult(boolean sent, String reason) {}

    /** The answer to an HTTP receive: {@code received} false with a reason, or the value and Go's ok. */
    public record RecvResult(boolean received, JsonNode value, boolean ok, String reason) {}

    private final ConcurrentMap<String, NamedChannel> channels = new ConcurrentHashMap<>();
    /** Null in embedded mode. */
    private final ChannelDirectory directory;
    private final ServiceProperties.Channels limits;
    private final int maxCapacity;
    private final ServiceMetrics metrics;
    private final MemoryBudget budget;
    private final long maxChannelBytes;
    private final OpenLimit calls;
    /** Completed when the application starts closing: pending HTTP operations give up and answer. */
    private final Sinks.Empty<Void> shutdown = Sinks.empty();
    private volatile boolean shuttingDown;

    public ChannelService(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget) {
        this(properties, metrics, budget, null);
    }

    /**
     * @param directory  cluster mode: where every node's channels live, and the way to reach them;
     *                   null: embedded mode, this node's channels are all there are
     */
    public ChannelService(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget, ChannelDirectory directory) {
        this.directory = directory;
        this.limits = properties.channels();
        this.maxCapacity = properties.limits().maxChannelCapacity();
        this.metrics = metrics;
        this.budget = budget.memory();
        this.maxChannelBytes = budget.sizes().maxChannelBytes();
        this.calls = budget.channelCalls();
    }

    public int size() {
        return channels.size();
    }

    /** Where every node's channels live (cluster mode), or null: this node's channels are all there are. */
    public ChannelDirectory directory() {
        return directory;
    }

    public ServiceProperties.Channels limits() {
        return limits;
    }

    public int maxCapacity() {
        return maxCapacity;
    }

    /**
     * {@code make(chan any, capacity)} under {@code name}; 409 if the name is taken, 429 at the
     * channel limit or when its slot array does not fit the memory budget.
     */
    public NamedChannel create(String name, int capacity) {
        refuseWhileShuttingDown();
        if (channels.size() >= limits.maxChannels()) {
            throw new RefusedException(RefusedException.Reason.OVERLOADED, "there are already " + channels.size() + " channels, the limit",
                    Duration.ofSeconds(5));
        }
        long bytes = CHANNEL_BYTES + JsonSize.layout().refArray(capacity);
        budget.charge(Retained.CHANNELS, bytes);
        NamedChannel ch = new NamedChannel(name, capacity, Instant.now(), Chan.make(capacity),
                new ByteShare(budget, MemoryBudget.MAX_CHANNEL_BYTES, maxChannelBytes, "channel '" + name + "'"), bytes);
        NamedChannel prior = channels.putIfAbsent(name, ch);
        if (prior != null) {
            budget.release(Retained.CHANNELS, bytes);
            throw new ConflictException(ConflictException.Reason.CHANNEL_EXISTS, "channel '" + name + "' already exists").with("channel", name);
        }
        return ch;
    }

    /** The channel named {@code name}, or null. */
    public Chan<Object> lookup(String name) {
        NamedChannel ch = channels.get(name);
        return ch == null ? null : ch.chan();
    }

    /** The channel named {@code name} with its share, or null: what a job that shares it needs. */
    public NamedChannel named(String name) {
        return channels.get(name);
    }

    public NamedChannel get(String name) {
        NamedChannel ch = channels.get(name);
        if (ch == null) {
            throw new NotFoundException("channel", name);
        }
        return ch;
    }

    public ChannelView view(NamedChannel ch) {
        Chan<Object> c = ch.chan();
        return ChannelView.local(ch.name(), c.cap(), c.len(), c.isClosed(), c.waitingSenders(), c.waitingReceivers(), ch.createdAt(),
                ch.share().used(), ch.share().max(), directory == null ? null : directory.localNode());
    }

    public List<ChannelView> list() {
        return channels.values().stream().sorted(Comparator.comparing(NamedChannel::name)).map(this::view).toList();
    }

    /** {@code close(ch)}: wakes every waiting receiver (ok=false) and fails every waiting sender. 409 if closed. */
    public void close(String name) {
        NamedChannel ch = get(name);
        try {
            ch.chan().close();
            metrics.channelOp("close", "ok");
        } catch (ChanClosedException e) {
            metrics.channelOp("close", "closed");
            throw closed(name);
        }
    }

    /**
     * Removes the channel; closes it first if open, so nobody waits on it for ever, and discards
     * the values still buffered (a job that holds the channel sees it closed and drained).
     */
    public void delete(String name) {
        if (directory != null) {
            if (!channels.containsKey(name)) {
                throw new NotFoundException("channel", name);
            }
            // First out of the directory: if NATS refuses, the channel stays whole and DELETE can be retried.
            directory.unregister(name);
        }
        NamedChannel ch = channels.remove(name);
        if (ch == null) {
            throw new NotFoundException("channel", name);
        }
        try {
            ch.chan().close();
        } catch (ChanClosedException alreadyClosed) {
            // deleting a closed channel is fine
        }
        Received<Object> r;
        while ((r = ch.chan().tryRecv()) != null && r.ok()) {
            HeldValue.take(r.value());
        }
        budget.release(Retained.CHANNELS, ch.bufferBytes());
    }

    /**
     * Sends {@code value}, waiting at most {@code timeout}; see the class comment for what the
     * answer guarantees. Errors: 404 unknown channel, 409 closed channel, 429 when the value does
     * not fit the channel's share or the memory budget, or too many channel calls are open.
     */
    public Mono<SendResult> send(String name, JsonNode value, Duration timeout) {
        refuseWhileShuttingDown();
        NamedChannel nc = channels.get(name);
        if (nc == null) {
            return remote(name).flatMap(home -> calls.guard(directory.send(home, value, timeout)))
                    .map(r -> new SendResult(r.sent(), r.reason()))
                    .doOnSuccess(r -> metrics.channelOp("send", r.sent() ? "ok" : r.reason()))
                    .doOnError(e -> metrics.channelOp("send", failure(e)));
        }
        Chan<Object> ch = nc.chan();
        return calls.guard(Mono.defer(() -> {
            HeldValue held = HeldValue.offer(nc.share(), value);
            CompletableFuture<Void> f = ch.sendAsync(held);
            // Whatever ends the send settles the value's charge: delivered, withdrawn or refused (closed).
            f.whenComplete((v, e) -> {
                if (e == null) {
                    held.buffered();
                } else {
                    held.withdraw();
                }
            });
            AtomicBoolean answered = new AtomicBoolean();
            Mono<SendResult> delivered = Mono.fromFuture(f, true)
                    .onErrorResume(CancellationException.class, withdrawn -> Mono.never()) // giveUp answers
                    .then(Mono.fromSupplier(() -> new SendResult(true, null)))
                    .onErrorMap(ChanClosedException.class, e -> closed(name));
            Mono<SendResult> giveUp = giveUpSignal(timeout).flatMap(reason -> {
                if (f.cancel(false)) {
                    return Mono.just(new SendResult(false, reason));
                }
                return delivered; // the send completed before the withdrawal: its result stands
            });
            // Fast path: a send that completed at once (a buffer slot, a waiting receiver) needs no timer.
            return (f.isDone() ? delivered : Mono.firstWithSignal(delivered, giveUp))
                    .doOnSuccess(r -> {
                        answered.set(true);
                        metrics.channelOp("send", r.sent() ? "ok" : r.reason());
                    })
                    .doOnError(e -> metrics.channelOp("send", "closed"))
                    .doOnCancel(() -> {
                        // The client went away. Withdraw if still pending; if the send already
                        // happened there is nothing to undo (it was delivered).
                        if (!answered.get()) {
                            metrics.channelOp("send", f.cancel(false) ? "withdrawn" : "delivered_unanswered");
                        }
                    });
        }));
    }

    /**
     * Receives one value, waiting at most {@code timeout}. {@code ok=false} means the channel is
     * closed and drained (Go's {@code v, ok := <-ch}). Errors: 404 unknown channel, 429 when too
     * many channel calls are open (never for want of budget: a receive frees bytes).
     */
    public Mono<RecvResult> recv(String name, Duration timeout) {
        refuseWhileShuttingDown();
        NamedChannel nc = channels.get(name);
        if (nc == null) {
            return remote(name).flatMap(home -> calls.guard(directory.recv(home, timeout), true))
                    .map(r -> new RecvResult(r.received(), r.value(), r.ok(), r.reason()))
                    .doOnSuccess(r -> metrics.channelOp("recv", r.received() ? (r.ok() ? "ok" : "closed") : r.reason()))
                    .doOnError(e -> metrics.channelOp("recv", failure(e)));
        }
        Chan<Object> ch = nc.chan();
        // A receive frees bytes: a full budget must not refuse it, or the budget could never drain.
        return calls.guard(Mono.defer(() -> {
            CompletableFuture<Received<Object>> f = ch.recvAsync();
            AtomicBoolean answered = new AtomicBoolean();
            Mono<RecvResult> taken = Mono.fromFuture(f, true)
                    .onErrorResume(CancellationException.class, withdrawn -> Mono.never()) // giveUp answers
                    .map(ChannelService::result);
            Mono<RecvResult> giveUp = giveUpSignal(timeout).flatMap(reason -> {
                if (f.cancel(false)) {
                    return Mono.just(new RecvResult(false, null, false, reason));
                }
                return taken; // a value arrived before the withdrawal: return it, never drop it
            });
            return (f.isDone() ? taken : Mono.firstWithSignal(taken, giveUp))
                    .doOnSuccess(r -> {
                        answered.set(true);
                        metrics.channelOp("recv", r.received() ? (r.ok() ? "ok" : "closed") : r.reason());
                    })
                    .doOnCancel(() -> {
                        if (answered.get()) {
                            return;
                        }
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
                    });
        }), true);
    }

    // ---------------------------------------------------------------- wherever the channel lives

    /** This node's id in cluster mode, else null. */
    public String node() {
        return directory == null ? null : directory.localNode();
    }

    /**
     * POST /channels: {@link #create} here and, in cluster mode, the name recorded in the
     * directory, so that it exists once in the cluster (409 if any node has it; 503 while NATS
     * cannot be reached, and then nothing was made).
     */
    public Mono<ChannelView> open(String name, int capacity) {
        if (directory == null) {
            return Mono.fromCallable(() -> view(create(name, capacity)));
        }
        return Mono.fromCallable(() -> {
            NamedChannel ch = create(name, capacity);
            try {
                directory.register(name, capacity, ch.createdAt());
            } catch (RuntimeException e) {
                discard(ch);
                if (e instanceof ConflictException ce && ce.reason() == ConflictException.Reason.CHANNEL_EXISTS) {
                    throw new ConflictException(ConflictException.Reason.CHANNEL_EXISTS, "channel '" + name + "' already exists on another node")
                            .with("channel", name);
                }
                throw e;
            }
            return view(ch);
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /** Takes back a channel made here whose registration failed: nobody but this node knew it. */
    private void discard(NamedChannel ch) {
        if (channels.remove(ch.name(), ch)) {
            try {
                ch.chan().close();
            } catch (ChanClosedException alreadyClosed) {
                // nothing to wake
            }
            budget.release(Retained.CHANNELS, ch.bufferBytes());
        }
    }

    /** GET /channels/{name}: the state, here or on its home (410 if the home is gone). */
    public Mono<ChannelView> describe(String name) {
        NamedChannel nc = channels.get(name);
        if (nc != null) {
            return Mono.fromSupplier(() -> view(nc));
        }
        return remote(name).flatMap(home -> directory.describe(home).map(state -> state
                .map(st -> ChannelView.of(st, home.node())).orElseThrow(() -> new NotFoundException("channel", name))));
    }

    /** POST /channels/{name}/close: closes it, here or on its home, and answers its state. */
    public Mono<ChannelView> closeChannel(String name) {
        NamedChannel nc = channels.get(name);
        if (nc != null || directory == null) {
            return Mono.fromSupplier(() -> {
                close(name);
                return view(get(name));
            });
        }
        return remote(name).flatMap(home -> directory.close(home)
                .doOnSuccess(v -> metrics.channelOp("close", "ok"))
                .doOnError(e -> metrics.channelOp("close", failure(e)))
                .then(directory.describe(home))
                .map(state -> state.map(st -> ChannelView.of(st, home.node())).orElseThrow(() -> new NotFoundException("channel", name))));
    }

    /**
     * DELETE /channels/{name}: here, or on its home; a lost channel (its home is gone) is removed
     * from the directory by whichever node is asked.
     */
    public Mono<Void> remove(String name) {
        if (directory == null) {
            return Mono.fromRunnable(() -> delete(name));
        }
        if (channels.containsKey(name)) {
            return Mono.<Void>fromRunnable(() -> delete(name)).subscribeOn(Schedulers.boundedElastic());
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
        }).subscribeOn(Schedulers.boundedElastic()).flatMap(home -> home.map(directory::delete).orElse(Mono.empty()));
    }

    /**
     * GET /channels: this node's channels and, in cluster mode, every other node's, each with its
     * home {@code node}: one request per node (not per channel); channels of a node that is gone
     * are shown {@code lost}. 503 while NATS cannot be reached.
     */
    public Mono<List<ChannelView>> listAll() {
        if (directory == null) {
            return Mono.fromSupplier(this::list);
        }
        return Mono.fromCallable(() -> {
            directory.checkReachable();
            return directory.list();
        }).subscribeOn(Schedulers.boundedElastic()).flatMap(homes -> {
            Map<List<String>, List<ChannelHome>> byHome = new LinkedHashMap<>();
            for (ChannelHome h : homes) {
                if (h.node().equals(directory.localNode()) && h.incarnation().equals(directory.localIncarnation())) {
                    continue; // this node's own channels come from its map, as they are now
                }
                byHome.computeIfAbsent(List.of(h.node(), h.incarnation()), k -> new ArrayList<>()).add(h);
            }
            return Flux.fromIterable(byHome.entrySet())
                    .flatMap(e -> directory.states(e.getKey().get(0), e.getKey().get(1))
                            .map(states -> states.stream().map(st -> ChannelView.of(st, e.getKey().get(0))).toList())
                            .onErrorResume(GoneException.class, lost -> Mono.just(e.getValue().stream().map(ChannelView::lost).toList())))
                    .collectList()
                    .map(remote -> {
                        List<ChannelView> all = new ArrayList<>(list());
                        remote.forEach(all::addAll);
                        all.sort(Comparator.comparing(ChannelView::name));
                        return all;
                    });
        });
    }

    /**
     * The home of a channel this node does not hold: 404 in embedded mode or when no node has
     * it, 410 when the directory names this node's previous life. The lookup is a KV read, run
     * off the event loop.
     */
    private Mono<ChannelHome> remote(String name) {
        if (directory == null) {
            return Mono.error(new NotFoundException("channel", name));
        }
        return Mono.fromCallable(() -> directory.home(name)).subscribeOn(Schedulers.boundedElastic()).flatMap(found -> {
            if (found.isEmpty()) {
                return Mono.error(new NotFoundException("channel", name));
            }
            ChannelHome home = found.get();
            if (home.node().equals(directory.localNode())) {
                if (home.incarnation().equals(directory.localIncarnation())) {
                    // recorded here but not in the map: made or deleted a moment ago
                    NamedChannel nc = channels.get(name);
                    return nc == null ? Mono.error(new NotFoundException("channel", name)) : Mono.just(home);
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

    /** Emits "timeout" after {@code timeout}, or "shutdown" when the application starts closing. */
    private Mono<String> giveUpSignal(Duration timeout) {
        return Mono.firstWithValue(Mono.delay(timeout).thenReturn("timeout"), shutdown.asMono().thenReturn("shutdown"));
    }

    /** Answers every pending HTTP send and receive ("shutdown") so graceful shutdown can drain. */
    public void beginShutdown() {
        shuttingDown = true;
        shutdown.tryEmitEmpty();
    }

    /** New channels and new HTTP sends and receives get 503 once shutdown has begun. */
    private void refuseWhileShuttingDown() {
        if (shuttingDown) {
            throw new ShuttingDownException();
        }
    }

    /** The answer for a value taken out of the channel; its bytes go back to the budget (once, however often this runs). */
    private static RecvResult result(Received<Object> r) {
        return new RecvResult(true, r.ok() ? HeldValue.take(r.value()) : null, r.ok(), null);
    }

    private static ServiceException closed(String name) {
        return ConflictException.channelClosed(name);
    }
}
