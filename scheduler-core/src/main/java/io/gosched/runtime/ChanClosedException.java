package io.gosched.runtime;

/**
 * Thrown by a send on a closed channel (also when the channel is closed while the sender waits, and
 * by a select whose chosen case is such a send), and by {@link Chan#close()} of a closed channel.
 * Go panics in the same places: {@code "send on closed channel"}, {@code "close of closed channel"}.
 */
public final class ChanClosedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ChanClosedException(String message) {
        super(message);
    }
}
