package io.gosched.cluster.channel;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.gosched.service.budget.HeldValue;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.service.error.NotFoundException;
import io.gosched.runtime.Received;
import tools.jackson.databind.JsonNode;

/**
 * The node's {@link ChannelService} channels as the {@link LocalChannels} forwarded operations run on.
 *
 * <p>Values travel as {@link HeldValue}s charged to the channel's share of this node's memory
 * budget, exactly as an HTTP send on this node: a forwarded send that does not fit is refused
 * ({@link io.gosched.service.error.RefusedException} from {@link #send}) before anything is kept, so the other nodes cannot
 * fill this node's heap past the budget. What a receiver takes out is released by
 * {@code HeldValue.take} on the home ({@code HomeServer}).
 */
public final class ChannelServiceChannels implements LocalChannels {

    private final ChannelService channels;

    public ChannelServiceChannels(ChannelService channels) {
        this.channels = channels;
    }

    private ChannelService.NamedChannel named(String name) {
        ChannelService.NamedChannel ch = channels.named(name);
        if (ch == null) {
            throw notFound(name);
        }
        return ch;
    }

    private static NotFoundException notFound(String name) {
        return new NotFoundException("channel", name);
    }

    @Override
    public CompletableFuture<Void> send(String name, JsonNode value) {
        ChannelService.NamedChannel nc = named(name);
        HeldValue held = HeldValue.offer(nc.share(), value);
        CompletableFuture<Void> f = nc.chan().sendAsync(held);
        // Whatever ends the send settles the value's charge: delivered, withdrawn or refused (closed).
        f.whenComplete((v, e) -> {
            if (e == null) {
                held.buffered();
            } else {
                held.withdraw();
            }
        });
        return f; // the channel's own future: its cancel(false) withdraws atomically
    }

    @Override
    public CompletableFuture<Received<Object>> recv(String name) {
        return named(name).chan().recvAsync();
    }

    @Override
    public void close(String name) {
        channels.close(name);
    }

    @Override
    public void delete(String name) {
        channels.delete(name);
    }

    @Override
    public boolean putBack(String name, JsonNode value) {
        ChannelService.NamedChannel nc = channels.named(name);
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
        ChannelService.NamedChannel ch = channels.named(name);
        return ch == null ? Optional.empty() : Optional.of(state(channels.view(ch)));
    }

    @Override
    public List<ChannelOutcome.State> list(String after, int limit) {
        return channels.list().stream().filter(v -> after == null || v.name().compareTo(after) > 0)
                .sorted(Comparator.comparing(ChannelService.ChannelView::name)).limit(limit).map(ChannelServiceChannels::state).toList();
    }

    private static ChannelOutcome.State state(ChannelService.ChannelView v) {
        return new ChannelOutcome.State(v.name(), v.capacity(), v.len(), v.closed(), v.waitingSenders(), v.waitingReceivers(), v.createdAt(),
                v.bytes(), v.maxBytes());
    }
}
