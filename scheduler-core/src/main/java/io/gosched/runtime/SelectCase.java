package io.gosched.runtime;

/**
 * One case of a {@link Select}: a send of a value to a channel, or a receive from one. A case whose
 * channel is null never proceeds (Go's nil channel). Build cases with {@link Select#send} and
 * {@link Select#recv}; a case is immutable and may be reused across selects.
 */
public final class SelectCase {
    /** The channel, or null for a case that is never ready. */
    final Chan<?> c;
    /** True for a send case. */
    final boolean isSend;
    /** The value to send (send cases only; never null). */
    final Object elem;

    SelectCase(Chan<?> c, boolean isSend, Object elem) {
        this.c = c;
        this.isSend = isSend;
        this.elem = elem;
    }

    /** True for a send case, false for a receive case. */
    public boolean isSend() {
        return isSend;
    }

    /** The case's channel; null when the case never proceeds. */
    public Chan<?> chan() {
        return c;
    }

    @Override
    public String toString() {
        return (isSend ? "send(" : "recv(") + c + ")";
    }
}
