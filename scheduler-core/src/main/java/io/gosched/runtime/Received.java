package io.gosched.runtime;

/**
 * The result of a receive, like Go's {@code v, ok := <-ch}: {@code ok} is true when {@code value} was
 * sent by a sender, false when the channel is closed and drained (then {@code value} is null).
 *
 * @param value the value received, or null when {@code ok} is false
 * @param ok whether a value was received
 */
public record Received<T>(T value, boolean ok) {
    private static final Received<?> CLOSED = new Received<>(null, false);

    /** The one result of a receive from a closed, drained channel. */
    @SuppressWarnings("unchecked")
    static <T> Received<T> closed() {
        return (Received<T>) CLOSED;
    }
}
