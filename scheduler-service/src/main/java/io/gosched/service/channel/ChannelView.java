package io.gosched.service.channel;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.channel.spi.ChannelOutcome;

/**
 * The state of a channel as GET shows it.
 *
 * @param bytes     what its buffered values and pending HTTP sends hold of the memory budget
 * @param maxBytes  its share ({@code gosched.api.limits.max-channel-bytes})
 * @param node      its home node, where there is more than one; absent otherwise
 * @param lost      true when its home is gone; absent otherwise
 */
public record ChannelView(String name, int capacity, int len, boolean closed, int waitingSenders, int waitingReceivers,
        Instant createdAt, long bytes, long maxBytes,
        @JsonInclude(JsonInclude.Include.NON_NULL) String node,
        @JsonInclude(JsonInclude.Include.NON_NULL) Boolean lost) {

    /** A channel of this node ({@code node} null where it is the only one, and not shown). */
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

    /** What a home tells another node of this channel. */
    ChannelOutcome.State state() {
        return new ChannelOutcome.State(name, capacity, len, closed, waitingSenders, waitingReceivers, createdAt, bytes, maxBytes);
    }
}
