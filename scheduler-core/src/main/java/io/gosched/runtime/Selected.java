package io.gosched.runtime;

/**
 * The outcome of {@link Select#select} / {@link Select#trySelect}.
 *
 * @param index the index of the case that proceeded, in the order given; -1 when {@code trySelect}
 *     found no case ready (Go's {@code default})
 * @param value for a receive case, the value received (null when the channel was closed); null for a
 *     send case and for -1
 * @param ok for a receive case, Go's {@code ok} (false: closed and drained); true for a send case
 *     that delivered its value; false for -1
 */
public record Selected(int index, Object value, boolean ok) {
    static final Selected NONE = new Selected(-1, null, false);

    /** The received value, typed by the caller (who knows the case's channel type). */
    @SuppressWarnings("unchecked")
    public <T> T valueAs() {
        return (T) value;
    }
}
