package io.gosched.web.trace;

/**
 * One scheduler event as the core's {@code io.gosched.runtime.Trace.Recording.stop()} returns it
 * (docs/telemetry.md, "Trace recording hook"): the web layer's copy of that record, so the
 * Chrome-trace conversion is written and tested before the hook lands.
 *
 * @param tsNanos nanoseconds since the recording started
 * @param p the P the event happened on, -1 when none (a platform thread, sysmon)
 * @param goid the goroutine concerned, -1 when none
 * @param kind one of the {@code KIND_*} names
 * @param arg kind-specific: see each constant
 */
public record TraceEvent(long tsNanos, int p, long goid, String kind, long arg) {

    /** G starts running on P. arg unused. */
    public static final String GO_START = "GoStart";
    /** G's body returned (goexit). */
    public static final String GO_END = "GoEnd";
    /** G parked (gopark). arg: wait-reason ordinal. */
    public static final String GO_PARK = "GoPark";
    /** G made runnable (goready). p: the readying P; arg: goid of the readier, -1 from outside. */
    public static final String GO_UNPARK = "GoUnpark";
    /** G gave up its P at a safe point (arg 0) or lost it by hand-off after ignoring a request (arg 1). */
    public static final String GO_PREEMPT = "GoPreempt";
    /** G yielded (Go.yield, runtime.Gosched). */
    public static final String GO_SCHED = "GoSched";
    /** G created (newproc). arg: parent goid, -1 from outside. */
    public static final String GO_CREATE = "GoCreate";
    /** G entered Go.syscall (entersyscall). */
    public static final String GO_SYSCALL = "GoSysCall";
    /** G left the syscall (exitsyscall). arg: 1 when its P had been retaken. */
    public static final String GO_SYSEXIT = "GoSysExit";
    /** P stole from another P (runqsteal). goid: first stolen G; arg: {@code victimP << 32 | count}. */
    public static final String STEAL = "Steal";
    /** P handed off (handoffp). arg: 0 syscall retake, 1 preemption, 2 other. */
    public static final String PROC_HANDOFF = "ProcHandoff";

    /** The victim P of a {@link #STEAL}. */
    public int stealVictim() {
        return (int) (arg >>> 32);
    }

    /** How many goroutines a {@link #STEAL} moved. */
    public int stealCount() {
        return (int) arg;
    }
}
