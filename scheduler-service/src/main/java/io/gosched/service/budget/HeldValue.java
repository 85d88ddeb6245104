package io.gosched.service.budget;

import tools.jackson.databind.JsonNode;

/**
 * A JSON value in a named channel together with its charge, so whoever takes it out (an HTTP
 * receive or a job's goroutine) releases exactly what was charged when it went in. Named
 * channels hold only these; a job's own channels hold its literals, which its request pays for.
 *
 * <p>States, each owning its bytes under one kind:
 * <pre>
 *   PENDING  (PENDING_SENDS) -- the send completed ------------> BUFFERED (CHANNELS)
 *   PENDING | BUFFERED ------- taken by a receiver, or withdrawn -> TAKEN (released)
 *   TAKEN -------------------- put back (its receiver left) -----> PENDING (forced: it was accepted)
 * </pre>
 * A value handed straight to a waiting receiver may be taken before its sender hears that the
 * send completed; {@link #buffered} then finds it TAKEN and does nothing.
 *
 * <p>Thread-safe: the state is guarded by the value's monitor; the budget is called outside it.
 */
public final class HeldValue {

    /** This object: the value and share references, the byte count and the state. */
    public static final long SIZE = JsonSize.layout().object(2, 8 + 4);

    private static final int PENDING = 0;
    private static final int BUFFERED = 1;
    private static final int TAKEN = 2;

    private final JsonNode value;
    private final long bytes;
    private final ByteShare share;
    private int state; // guarded by this

    private HeldValue(JsonNode value, long bytes, ByteShare share, int state) {
        this.value = value;
        this.bytes = bytes;
        this.share = share;
        this.state = state;
    }

    /** An HTTP send's value, charged to {@code share} as a pending send; 429 when it does not fit. */
    public static HeldValue offer(ByteShare share, JsonNode value) {
        long bytes = JsonSize.of(value) + SIZE;
        share.charge(Retained.PENDING_SENDS, bytes);
        return new HeldValue(value, bytes, share, PENDING);
    }

    /**
     * A job's send: charged to {@code share} as held by the channel at once (the job's request
     * already pays for the literal while the send waits); null when the share or the budget has
     * no room, and the job waits.
     *
     * @param valueBytes {@code JsonSize.of(value)}, which the caller may have cached
     */
    public static HeldValue tryOffer(ByteShare share, JsonNode value, long valueBytes) {
        long bytes = valueBytes + SIZE;
        return share.tryCharge(Retained.CHANNELS, bytes) == ByteShare.Outcome.CHARGED
                ? new HeldValue(value, bytes, share, BUFFERED) : null;
    }

    /**
     * A value that was already accepted coming back into a channel (a forwarded receive whose
     * caller never got it): charged to {@code share} as a pending send, never refused.
     */
    public static HeldValue returned(ByteShare share, JsonNode value) {
        long bytes = JsonSize.of(value) + SIZE;
        share.force(Retained.PENDING_SENDS, bytes);
        return new HeldValue(value, bytes, share, PENDING);
    }

    public JsonNode value() {
        return value;
    }

    /** Bytes charged for this value, its own object included. */
    public long bytes() {
        return bytes;
    }

    /** The sender learnt that its send completed: a pending value is now the channel's. */
    public void buffered() {
        synchronized (this) {
            if (state != PENDING) {
                return;
            }
            state = BUFFERED;
            share.move(Retained.PENDING_SENDS, Retained.CHANNELS, bytes);
        }
    }

    /** A receiver took the value out of the channel: its bytes go back. Idempotent. */
    public JsonNode take() {
        Retained from;
        synchronized (this) {
            from = state == PENDING ? Retained.PENDING_SENDS : state == BUFFERED ? Retained.CHANNELS : null;
            state = TAKEN;
        }
        if (from != null) {
            share.release(from, bytes);
        }
        return value;
    }

    /** The send was withdrawn or failed (closed channel, timeout, client gone): never delivered, released. */
    public void withdraw() {
        take();
    }

    /** A taken value goes back into its channel (its receiver went away): charged again, never refused. */
    public HeldValue requeue() {
        boolean charge;
        synchronized (this) {
            charge = state == TAKEN;
            if (charge) {
                state = PENDING;
            }
        }
        if (charge) {
            share.force(Retained.PENDING_SENDS, bytes);
        }
        return this;
    }

    /**
     * Takes the channel element {@code o} out: a held value gives its bytes back; a bare JSON
     * value (a job's own channel, or one put in through {@code Chan} directly) was never charged.
     */
    public static JsonNode take(Object o) {
        return o instanceof HeldValue h ? h.take() : (JsonNode) o;
    }
}
