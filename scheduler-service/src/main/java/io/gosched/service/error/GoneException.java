package io.gosched.service.error;

/**
 * It existed and will not come back: a channel whose home node died (or restarted, losing it).
 * The effect of the operation is unknown: a send may or may not have been delivered before the
 * home died, so it is never reported as not sent.
 */
public final class GoneException extends ServiceException {

    /** The code (the last segment of the problem's type) and the title of a lost channel. */
    public static final String CHANNEL_LOST = "channel-lost";
    public static final String CHANNEL_LOST_TITLE = "Channel lost";

    private final String channel;

    private GoneException(String channel, String message) {
        super(message);
        this.channel = channel;
        with("channel", channel);
    }

    /** The channel {@code name} is lost; {@code message} says how. */
    public static GoneException channelLost(String name, String message) {
        return new GoneException(name, message);
    }

    public String channel() {
        return channel;
    }
}
