package io.gosched.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.locks.LockSupport;

/**
 * A machine: a platform thread named {@code gosched-m-N} that runs {@code schedule()} while it
 * holds a P, parks on its note when there is nothing to do, and runs a goroutine's blocking
 * code without a P during a syscall.
 *
 * Go: runtime/runtime2.go m
 */
final class M extends Thread {

    final int mid;
    final Sched sched;

    /** The P held, or null (idle, in a syscall, or handed off). Only this M writes it. */
    volatile P p;
    /** The P handed over by startm before the wake-up. */
    volatile P nextp;
    /** The P held before entering a syscall, to try to take back on exit. */
    P oldp;
    /** See "Spinning and wakep" in Scheduler. Written only by this M. */
    boolean spinning;
    /** The goroutine mounted on this M, or null. */
    volatile G curg;
    /** Link on the idle M list; sched.lock must be held. */
    M schedlink;
    /** Set by findRunnable: the G it returns inherits the current time slice (came from runnext). */
    boolean inheritTime;
    // ---- stealWork's results and scratch (Go returns them as a tuple); written only by this M ----
    boolean stealNewWork;
    long stealPollUntil;
    long stealNow;
    /** A victim refilled its runnext while this M paused to steal it (see RunQueue.grab). */
    boolean stealBackedOff;
    boolean stealRanTimer;
    /**
     * While tracing: the clock reading taken when the last goroutine on this M stopped, reused as
     * the start time of the next one when findRunnable found it on the fast path (local or
     * global queue), so a switch costs one clock read instead of two. 0 when none. See
     * Trace.recordAt.
     */
    long traceClock;
    /** This M's syscalltick snapshot, for exitsyscall's fast path. */
    long syscalltick;

    /** The park note: set by notewakeup, consumed by notesleep. */
    private volatile boolean wakeup;

    M(Sched sched, int mid) {
        super(sched.threadGroup, null, sched.threadNamePrefix + mid, 0, false);
        this.sched = sched;
        this.mid = mid;
        setDaemon(true);
    }

    @Override
    public void run() {
        sched.scheduler.mstart(this);
    }

    /** Parks this thread until {@link #notewakeup()}. Executed only by this M. */
    void notesleep() {
        while (!wakeup) {
            LockSupport.park(this);
        }
        wakeup = false;
    }

    /** Wakes this M from {@link #notesleep()}. Can be executed by anyone. */
    void notewakeup() {
        wakeup = true;
        LockSupport.unpark(this);
    }

    /*
     * Why current() is never inlined. C2 treats Thread.currentThread() as immutable within one
     * compiled method (only JDK methods annotated @ChangesCurrentThread are told otherwise), so
     * it may load it once and reuse the value across a call. A goroutine's compiled loop that
     * calls Go.yield() and then Go.goid() spans a continuation yield; when the goroutine resumes
     * on another M, the reused value names the old M, whose curg is now some other goroutine.
     * (Virtual threads never notice: their currentThread is the virtual thread, which does not
     * change when the carrier does.) Reading the thread inside a separately compiled frame that
     * is never inlined into the caller gives a fresh value on every call.
     *
     * Two ways to keep currentFresh() out of its callers, cheapest first:
     * 1. A compiler directive "never inline M.currentFresh", added at class initialization
     *    through the DiagnosticCommand MBean (what `jcmd Compiler.directives_add` does), before
     *    any caller is hot enough to be compiled. A plain static call then costs ~1 ns.
     * 2. Where that MBean is missing (a jlinked image without jdk.management), a method handle
     *    in a non-final field: not a compile-time constant, so the JIT cannot inline through it
     *    (~6 ns a call).
     * SchedulerTest.currentGoroutineIsRightAfterMigrating fails when neither is in effect.
     */
    private static final boolean NEVER_INLINED = addNoInlineDirective();

    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle currentHandle = currentHandle();

    private static boolean addNoInlineDirective() {
        if (!Boolean.parseBoolean(System.getProperty("gosched.compilerDirective", "true"))) {
            return false;
        }
        java.nio.file.Path file = null;
        try {
            file = java.nio.file.Files.createTempFile("gosched-directive", ".json");
            java.nio.file.Files.writeString(file,
                    "[{ match: \"*.*\", inline: \"-io/gosched/runtime/M.currentFresh\" }]");
            Object answer = java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "compilerDirectivesAdd", new Object[] {new String[] {file.toString()}},
                    new String[] {String[].class.getName()});
            return String.valueOf(answer).contains("1 compiler directives added");
        } catch (Exception | LinkageError e) {
            return false;
        } finally {
            if (file != null) {
                try {
                    java.nio.file.Files.deleteIfExists(file);
                } catch (java.io.IOException ignored) {
                    // a leftover temp file is harmless
                }
            }
        }
    }

    private static MethodHandle currentHandle() {
        try {
            return MethodHandles.lookup().findStatic(M.class, "currentFresh", MethodType.methodType(M.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static M currentFresh() {
        return Thread.currentThread() instanceof M m ? m : null;
    }

    /** Which of the two ways above is in effect (for tests and diagnostics). */
    static boolean currentIsDirectCall() {
        return NEVER_INLINED;
    }

    /**
     * The M running the calling code, or null on a thread that is not an M. Safe to call from
     * goroutine code that has migrated between Ms (see the comment above).
     */
    static M current() {
        if (NEVER_INLINED) {
            return currentFresh();
        }
        try {
            return (M) currentHandle.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
