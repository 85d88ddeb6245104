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

    /** One case of a select: a receive from {@code channel}, or a send of {@code value} (a JSON null is NullNode) on it. */
    public record SelectCase(String channel, boolean send, JsonNode value) {}

    /**
     * A select: {@code index} of the case that fired (null: none did, {@code reason} says why:
     * timeout, shutdown) with, for a receive, the value and Go's {@code ok}.
     */
    public record Select(Integer index, JsonNode value, boolean ok, String reason) {

        /** True if a case fired. */
        public boolean fired() {
            return index != null;
        }

        /** True if a receive case took a value out of its channel (which must reach exactly one caller). */
        public boolean tookValue(java.util.List<SelectCase> cases) {
            return index != null && !cases.get(index).send() && ok;
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
