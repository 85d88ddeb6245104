package io.gosched.service.channel.spi;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.gosched.runtime.Received;
import tools.jackson.databind.JsonNode;

/**
 * The channels living on this node, as the {@link ChannelDirectory} runs forwarded operations on
 * them: the node's named {@code Chan}s, with their async operations as they are.
 *
 * <p>The futures are the channel's own ({@code Chan.sendAsync}, {@code Chan.recvAsync}), so
 * {@code cancel(false)} withdraws the pending operation atomically: true means the value was
 * not delivered (send) or nothing was taken (recv); false means the operation completed and its
 * result stands. The directory builds timeouts, retries and the outcome cache on exactly that
 * rule, as {@code ChannelService} builds its HTTP answers on it. Nothing here blocks.
 */
public interface LocalChannels {

    /**
     * Starts a send; the future completes once the value is delivered (to a receiver or the
     * buffer), or exceptionally with {@code ChanClosedException} on a closed channel.
     *
     * @throws io.gosched.service.error.NotFoundException if there is no such channel here
     * @throws io.gosched.service.error.RefusedException when the value does not fit the channel's share or the memory budget
     */
    CompletableFuture<Void> send(String name, JsonNode value);

    /**
     * Starts a receive; {@code ok} false once the channel is closed and drained.
     *
     * @throws io.gosched.service.error.NotFoundException if there is no such channel here
     */
    CompletableFuture<Received<Object>> recv(String name);

    /**
     * Closes the channel.
     *
     * @throws io.gosched.service.error.NotFoundException if there is no such channel here
     * @throws io.gosched.service.error.ConflictException CHANNEL_CLOSED if it already was
     */
    void close(String name);

    /**
     * Puts back a value a recv took whose caller never got it (it went away, or never confirmed):
     * sent again without a timeout so that it is not lost; it may be seen out of order. A value
     * whose channel was closed or deleted meanwhile cannot be put back; that is reported, not hidden.
     *
     * @return false if the value could not be put back
     */
    boolean putBack(String name, JsonNode value);

    /** The channel's state, or empty if it does not exist here. */
    Optional<ChannelOutcome.State> describe(String name);

    /** The states of the channels living here, sorted by name, those after {@code after} (null: from the first), at most {@code limit}. */
    List<ChannelOutcome.State> list(String after, int limit);

    /**
     * Deletes the channel as DELETE on its home does: closes it, discards what it buffers and
     * removes it from the directory. May block on the directory (the caller runs it off the
     * NATS dispatcher).
     *
     * @throws io.gosched.service.error.NotFoundException if there is no such channel here
     */
    void delete(String name);
}
