package io.gosched.web.trace;

import io.gosched.runtime.Trace;

/**
 * One scheduler event as the core's {@link Trace.Recording#stop()} returns it: the web layer's view
 * of {@link Trace.Event} with the decoders the Chrome-trace conversion needs. The kind names are
 * the core's constants, so the two cannot drift apart.
 *
 * @param tsNanos nanoseconds since the recording started
 * @param p the P the event happened on, -1 when none (a platform thread, sysmon)
 * @param goid the goroutine concerned, -1 when none
 * @param kind one of the {@code KIND_*} names
 * @param arg kind-specific: see each constant
 * @param interpolated whether tsNanos was placed between the clocked events around it rather than
 *     read from the clock ({@link Trace.Timestamps#INTERPOLATED}: creations, unparks, steals)
 */
public record TraceEvent(long tsNanos, int p, long goid, String kind, long arg, boolean interpolated) {

    /** G starts running on P. arg unused. */
    public static final String GO_START = Trace.GO_START;
    /** G's body returned (goexit). */
    public static final String GO_END = Trace.GO_END;
    /** G parked (gopark). arg: wait-reason ordinal. */
    public static final String GO_PARK = Trace.GO_PARK;
    /** G made runnable (goready). p: the readying P; arg: goid of the readier, -1 from outside. */
    public static final String GO_UNPARK = Trace.GO_UNPARK;
    /** G gave up its P at a safe point (arg 0) or lost it by hand-off after ignoring a request (arg 1). */
    public static final String GO_PREEMPT = Trace.GO_PREEMPT;
    /** G yielded (Go.yield, runtime.Gosched). */
    public static final String GO_SCHED = Trace.GO_SCHED;
    /** G created (newproc). arg: parent goid, -1 from outside. */
    public static final String GO_CREATE = Trace.GO_CREATE;
    /** G entered Go.syscall (entersyscall). */
    public static final String GO_SYSCALL = Trace.GO_SYSCALL;
    /**
     * G left the syscall (exitsyscall). p: the P it runs on again, -1 when it found none and queued
     * itself (it then gets a {@link #GO_START} later); arg: 0 when it got its own P back, 1 otherwise.
     */
    public static final String GO_SYSEXIT = Trace.GO_SYSEXIT;
    /** P stole from another P (runqsteal). goid: first stolen G; arg: {@code victimP << 32 | count}. */
    public static final String STEAL = Trace.STEAL;
    /**
     * A P given to another M by sysmon (recorded from sysmon, so on the shared ring). p: the P handed
     * off; arg: 0 retaken from an M in a syscall, 1 a hog ignored preemption and a spare P was lent
     * to run the rest of its queue.
     */
    public static final String PROC_HANDOFF = Trace.PROC_HANDOFF;

    /** The web view of a core event. */
    public static TraceEvent of(Trace.Event e) {
        return new TraceEvent(e.tsNanos(), e.p(), e.goid(), e.kind(), e.arg(), e.interpolated());
    }

    /** The victim P of a {@link #STEAL}. */
    public int stealVictim() {
        return (int) (arg >>> 32);
    }

    /** How many goroutines a {@link #STEAL} moved. */
    public int stealCount() {
        return (int) arg;
    }
}
