package io.gosched.service.channel.spi;

import java.time.Instant;

import tools.jackson.databind.JsonNode;

/** The answers of channel operations, the same whether the channel is local or forwarded. */
public final class ChannelOutcome {

    private ChannelOutcome() {}

    /** A send: {@code sent} false means withdrawn, never delivered; {@code reason} says why (timeout, shutdown). */
    public record Send(boolean sent, String reason) {
        public static final Send SENT = new Send(true, null);
    }

    /**
     * A receive: {@code received} false (with a reason) means nothing was taken; else the value
     * and Go's {@code ok} ({@code ok} false: closed and drained, no value).
     */
    public record Recv(boolean received, JsonNode value, boolean ok, String reason) {

        /** True if a value was taken from the channel (and must reach exactly one caller). */
        public boolean tookValue() {
            return received && ok;
        }
    }

    /**
     * What GET shows of a channel.
     *
     * @param bytes     what its buffered values and pending sends hold of its home's memory budget
     * @param maxBytes  its share of that budget
     */
    public record State(String name, int capacity, int len, boolean closed, int waitingSenders, int waitingReceivers,
            Instant createdAt, long bytes, long maxBytes) {}
}
