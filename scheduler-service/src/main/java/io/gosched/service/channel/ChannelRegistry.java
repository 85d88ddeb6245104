package io.gosched.service.channel;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.gosched.runtime.Chan;
import io.gosched.runtime.ChanClosedException;
import io.gosched.runtime.Received;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ByteShare;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.JsonSize;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.metrics.ServiceMetrics;
import tools.jackson.databind.JsonNode;

/**
 * The named channels that live on this node: {@code Chan<Object>} holding JSON values, which its
 * jobs, its HTTP clients ({@link ChannelService}) and, in a cluster, the other nodes (this
 * registry is the home's {@link LocalChannels}) share. Every channel is made, found, closed and
 * deleted here; the errors are the domain's ({@link NotFoundException},
 * {@link ConflictException}, {@link RefusedException}) wherever the caller is.
 *
 * <h2>Memory</h2>
 * A channel's slot array is charged to the memory budget when it is made, and each value that
 * enters it travels as a {@link HeldValue} charged to the channel's {@link ByteShare}: as a
 * pending send while its sender waits, as the channel's once the send completed, released by
 * whoever takes it out (an HTTP receive, a job, a forwarded receive on the home). A send that
 * does not fit the channel's share or the budget is refused before anything is kept, so other
 * nodes cannot fill this node's heap past the budget either. Deleting a channel discards what it
 * still buffers and returns its bytes. Thread-safe.
 */
public final class ChannelRegistry implements LocalChannels {

    /**
     * A channel without its buffer: the {@code Chan}, its lock and wait queues, the registry's
     * record and map entry, the share. An estimate rounded up, as {@link JsonSize}'s are.
     */
    public static final long CHANNEL_BYTES = 512;

    private final ConcurrentMap<String, NamedChannel> channels = new ConcurrentHashMap<>();
    private final ChannelDirectory directory;
    private final ServiceProperties.Channels limits;
    private final int maxCapacity;
    private final ServiceMetrics metrics;
    private final MemoryBudget budget;
    private final long maxChannelBytes;
    private final ServiceShutdown shutdown;

    /**
     * @param directory  where the node's channels are recorded for the others (a node alone:
     *                   {@link SoleNodeChannels}, which records nothing)
     */
    public ChannelRegistry(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget, ChannelDirectory directory,
            ServiceShutdown shutdown) {
        this.directory = directory;
        this.limits = properties.channels();
        this.maxCapacity = properties.limits().maxChannelCapacity();
        this.metrics = metrics;
        this.budget = budget.memory();
        this.maxChannelBytes = budget.sizes().maxChannelBytes();
        this.shutdown = shutdown;
    }

    /** Channels living here now. */
    public int size() {
        return channels.size();
    }

    public ServiceProperties.Channels limits() {
        return limits;
    }

    public int maxCapacity() {
        return maxCapacity;
    }

    /**
     * {@code make(chan any, capacity)} under {@code name}, here only (recording it in the directory
     * is {@link ChannelService#open}'s). Refused when the node shuts down, at the channel limit or
     * when its slot array does not fit the memory budget; a conflict if the name is taken.
     */
    public NamedChannel create(String name, int capacity) {
        shutdown.refuseNewWork();
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

    /** Takes back a channel made here whose registration in the directory failed: nobody but this node knew it. */
    void discard(NamedChannel ch) {
        if (channels.remove(ch.name(), ch)) {
            try {
                ch.chan().close();
            } catch (ChanClosedException alreadyClosed) {
                // nothing to wake
            }
            budget.release(Retained.CHANNELS, ch.bufferBytes());
        }
    }

    /** True if a channel of that name lives here. */
    public boolean holds(String name) {
        return channels.containsKey(name);
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

    /** The channel named {@code name}; not found if it does not live here. */
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
                ch.share().used(), ch.share().max(), directory.isShared() ? directory.localNode() : null);
    }

    /** The channels living here, sorted by name. */
    public List<ChannelView> list() {
        return channels.values().stream().sorted(Comparator.comparing(NamedChannel::name)).map(this::view).toList();
    }

    /** {@code close(ch)}: wakes every waiting receiver (ok=false) and fails every waiting sender; a conflict if it was closed. */
    @Override
    public void close(String name) {
        NamedChannel ch = get(name);
        try {
            ch.chan().close();
            metrics.channelOp("close", "ok");
        } catch (ChanClosedException e) {
            metrics.channelOp("close", "closed");
            throw ConflictException.channelClosed(name);
        }
    }

    /**
     * Removes the channel: first from the directory (if that refuses, the channel stays whole and
     * the delete can be tried again), then here; closes it first if open, so nobody waits on it for
     * ever, and discards the values still buffered (a job that holds the channel sees it closed and
     * drained). May block on the directory.
     */
    @Override
    public void delete(String name) {
        if (!channels.containsKey(name)) {
            throw new NotFoundException("channel", name);
        }
        directory.unregister(name);
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

    // ---------------------------------------------------------------- operations on a channel of this node

    /** Starts a send of a value accepted from outside (HTTP, another node): charged to the channel's share first. */
    @Override
    public CompletableFuture<Void> send(String name, JsonNode value) {
        return send(get(name), value);
    }

    /**
     * Starts a send on {@code nc}: the value is charged to the channel's share as a pending send
     * (refused if it does not fit) and settled by whatever ends the send: delivered, withdrawn or
     * refused (closed). The future is the channel's own: its {@code cancel(false)} withdraws atomically.
     */
    CompletableFuture<Void> send(NamedChannel nc, JsonNode value) {
        HeldValue held = HeldValue.offer(nc.share(), value);
        CompletableFuture<Void> f = nc.chan().sendAsync(held);
        f.whenComplete((v, e) -> {
            if (e == null) {
                held.buffered();
            } else {
                held.withdraw();
            }
        });
        return f;
    }

    @Override
    public CompletableFuture<Received<Object>> recv(String name) {
        return get(name).chan().recvAsync();
    }

    @Override
    public boolean putBack(String name, JsonNode value) {
        NamedChannel nc = channels.get(name);
        if (nc == null) {
            return false;
        }
        HeldValue back = HeldValue.returned(nc.share(), value);
        CompletableFuture<Void> f = nc.chan().sendAsync(back);
        f.whenComplete((v, e) -> {
            if (e == null) {
                back.buffered();
            } else {
                back.withdraw();
            }
        });
        return !f.isCompletedExceptionally();
    }

    @Override
    public Optional<ChannelOutcome.State> describe(String name) {
        NamedChannel ch = channels.get(name);
        return ch == null ? Optional.empty() : Optional.of(view(ch).state());
    }

    @Override
    public List<ChannelOutcome.State> list(String after, int limit) {
        return list().stream().filter(v -> after == null || v.name().compareTo(after) > 0).limit(limit).map(ChannelView::state).toList();
    }
}
