package io.gosched.api.channel.spi;

import java.util.Objects;

/**
 * A channel operation that could not be carried out, local or forwarded: the HTTP layer turns
 * each kind into its problem ({@link Kind}).
 */
public final class ChannelException extends RuntimeException {

    /** Why the operation failed. */
    public enum Kind {
        /** 404: there is no channel of that name. */
        NOT_FOUND,
        /** 409: send on, or close of, a closed channel. */
        CLOSED,
        /** 409: a channel of that name exists already (create). */
        EXISTS,
        /**
         * 410: the channel's home node is gone (died, or restarted and lost its channels). The
         * operation's effect is unknown: a send may or may not have been delivered before the home
         * died, so it is never reported as not sent.
         */
        LOST
    }

    private final Kind kind;
    private final String channel;

    public ChannelException(Kind kind, String channel, String message) {
        super(message, null, false, false);
        this.kind = Objects.requireNonNull(kind);
        this.channel = Objects.requireNonNull(channel);
    }

    public Kind kind() {
        return kind;
    }

    public String channel() {
        return channel;
    }
}
