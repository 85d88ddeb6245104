package io.gosched.web.trace;

import io.gosched.runtime.Trace;

/**
 * One scheduler event as the core's {@link Trace.Recording#stop()} returns it: the web layer's view
 * of {@link Trace.Event} with the decoders the Chrome-trace conversion needs. The kind is the core's
 * {@link Trace.Kind}, so the two cannot drift apart; its {@link Trace.Kind#wireName()} is what the
 * exported JSON spells.
 *
 * @param tsNanos nanoseconds since the recording started
 * @param p the P the event happened on, -1 when none (a platform thread, sysmon)
 * @param goid the goroutine concerned, -1 when none
 * @param kind what happened
 * @param arg kind-specific: see each {@link Trace.Kind} constant
 * @param interpolated whether tsNanos was placed between the clocked events around it rather than
 *     read from the clock ({@link Trace.Timestamps#INTERPOLATED}: creations, unparks, steals)
 */
public record TraceEvent(long tsNanos, int p, long goid, Trace.Kind kind, long arg, boolean interpolated) {

    /** The web view of a core event. */
    public static TraceEvent of(Trace.Event e) {
        return new TraceEvent(e.tsNanos(), e.p(), e.goid(), e.kind(), e.arg(), e.interpolated());
    }

    /** The victim P of a {@link Trace.Kind#STEAL}. */
    public int stealVictim() {
        return (int) (arg >>> 32);
    }

    /** How many goroutines a {@link Trace.Kind#STEAL} moved. */
    public int stealCount() {
        return (int) arg;
    }
}
