package io.gosched.api.channel.spi;

import java.time.Duration;
import java.util.Optional;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The channels living on this node, as the {@link ChannelDirectory} runs forwarded operations on
 * them. The embedded {@code ChannelService} has exactly these semantics; its adapter is the one
 * implementation.
 *
 * <p>Cancelling a subscription to {@link #send} or {@link #recv} before it answered withdraws the
 * operation atomically: a send withdrawn is never delivered; a value a recv took before the
 * withdrawal is put back. Errors are {@link ChannelException}s (NOT_FOUND, CLOSED). Nothing here
 * may block the calling thread.
 */
public interface LocalChannels {

    /** Sends, waiting at most {@code timeout}; {@code sent:false} only when withdrawn. */
    Mono<ChannelOutcome.Send> send(String name, JsonNode value, Duration timeout);

    /** Receives one value, waiting at most {@code timeout}. */
    Mono<ChannelOutcome.Recv> recv(String name, Duration timeout);

    /** Closes the channel; CLOSED if it already was. */
    void close(String name);

    /**
     * Puts back a value a recv took whose caller never got it (it went away, or never confirmed):
     * the value is sent again without a timeout, so it is not lost; it may be seen out of order.
     */
    void putBack(String name, JsonNode value);

    /** The channel's state, or empty if it does not exist here. */
    Optional<ChannelOutcome.State> describe(String name);
}
