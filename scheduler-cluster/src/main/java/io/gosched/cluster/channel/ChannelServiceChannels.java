package io.gosched.cluster.channel;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.gosched.api.budget.HeldValue;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.channel.spi.ChannelException;
import io.gosched.api.channel.spi.ChannelOutcome;
import io.gosched.api.channel.spi.LocalChannels;
import io.gosched.api.error.ApiProblem;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Received;
import tools.jackson.databind.JsonNode;

/** The node's {@link ChannelService} channels as the {@link LocalChannels} forwarded operations run on. */
public final class ChannelServiceChannels implements LocalChannels {

    private final ChannelService channels;

    public ChannelServiceChannels(ChannelService channels) {
        this.channels = channels;
    }

    private Chan<Object> chan(String name) {
        Chan<Object> ch = channels.lookup(name);
        if (ch == null) {
            throw new ChannelException(ChannelException.Kind.NOT_FOUND, name, "channel '" + name + "' does not exist");
        }
        return ch;
    }

    /**
     * A forwarded send travels as an HTTP send does: a {@link HeldValue} charged to the channel's
     * share of the memory budget (429 when it does not fit), settled by whatever ends the send.
     */
    @Override
    public CompletableFuture<Void> send(String name, JsonNode value) {
        ChannelService.NamedChannel nc;
        try {
            nc = channels.get(name);
        } catch (ApiProblem notFound) {
            throw new ChannelException(ChannelException.Kind.NOT_FOUND, name, "channel '" + name + "' does not exist");
        }
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

    /**
     * The channel's own future, so that cancelling it withdraws the receive (a derived future
     * would not); its value may be a {@link HeldValue}: the caller takes it with {@link HeldValue#take(Object)}.
     */
    @Override
    public CompletableFuture<Received<Object>> recv(String name) {
        return chan(name).recvAsync();
    }

    @Override
    public void close(String name) {
        try {
            channels.close(name);
        } catch (ApiProblem p) {
            String type = p.getBody().getType() == null ? "" : p.getBody().getType().toString();
            if (type.equals(ApiProblem.TYPE_BASE + "channel-closed")) {
                throw new ChannelException(ChannelException.Kind.CLOSED, name, "channel '" + name + "' is closed");
            }
            if (type.equals(ApiProblem.TYPE_BASE + "not-found")) {
                throw new ChannelException(ChannelException.Kind.NOT_FOUND, name, "channel '" + name + "' does not exist");
            }
            throw p;
        }
    }

    @Override
    public boolean putBack(String name, JsonNode value) {
        Chan<Object> ch = channels.lookup(name);
        if (ch == null) {
            return false;
        }
        // Bare, as a job's value: uncharged until taken (HeldValue.take accepts both), so a value
        // that must not be lost is never refused for want of budget.
        CompletableFuture<Void> f = ch.sendAsync(value);
        return !f.isCompletedExceptionally();
    }

    @Override
    public Optional<ChannelOutcome.State> describe(String name) {
        ChannelService.NamedChannel ch;
        try {
            ch = channels.get(name);
        } catch (ApiProblem notFound) {
            return Optional.empty();
        }
        ChannelService.ChannelView v = channels.view(ch);
        return Optional.of(new ChannelOutcome.State(v.name(), v.capacity(), v.len(), v.closed(), v.waitingSenders(), v.waitingReceivers(),
                v.createdAt()));
    }
}
