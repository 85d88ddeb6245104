package io.gosched.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The {@code go} statement and the runtime calls a goroutine makes. Valid inside a goroutine;
 * where a call also makes sense on a platform thread, its Javadoc says what it does there.
 */
public final class Go {

    private Go() {
    }

    /**
     * Starts a goroutine (Go's newproc): the new G goes into runnext of the current P, so it
     * runs soon, on this P, unless another P steals it.
     *
     * @throws IllegalStateException outside a goroutine: use {@link GoRuntime#go(Runnable)}
     */
    public static void go(Runnable body) {
        G gp = current("Go.go");
        // A safe point, as the call to newproc is in Go (its prologue checks for preemption).
        // Without it a loop that only spawns could not be preempted: it would keep its P for
        // the whole loop while its new goroutines pile up in the global queue, and goroutines
        // woken meanwhile would queue behind them (seen as 100+ ms sleep lateness).
        Scheduler.checkpoint(gp);
        gp.sched.scheduler.newproc(body, gp);
    }

    /**
     * runtime.LockOSThread: wires the calling goroutine to the thread (M) it runs on. Until as
     * many {@link #unlockOSThread()} calls as lockOSThread calls have been made, the goroutine
     * always runs on that thread, and that thread runs no other goroutine: when the goroutine
     * blocks, the thread hands its P to another M and waits with it, keeping its frames, so
     * ThreadLocals, a {@code synchronized} block held across a channel operation or a sleep, and
     * thread-affine libraries see one thread throughout. If the goroutine ends while locked, the
     * thread ends too (its ThreadLocals with it) and the runtime starts another M when needed.
     * Calls nest (Go's counting); on a platform thread it does nothing (it is its own thread).
     *
     * <p>JVM departure: Go's locked M sleeps in the scheduler (stoplockedm) while its G waits;
     * here the M sleeps inside the goroutine's frames, without unmounting its continuation, so
     * its frames never leave the thread (and a native frame, which forbids unmounting, does not
     * stop it from parking). Each switch of a locked goroutine costs two thread wake-ups, as in
     * Go. See docs/runtime.md, "LockOSThread".
     *
     * @throws IllegalStateException when the nesting count would overflow
     */
    public static void lockOSThread() {
        G gp = Scheduler.getg();
        if (gp == null) {
            return;
        }
        if (gp.lockedExt == Short.MAX_VALUE) {
            throw new IllegalStateException("LockOSThread nesting overflow");
        }
        gp.lockedExt++;
        M mp = gp.m;
        mp.lockedg = gp;
        gp.lockedm = mp;
    }

    /**
     * runtime.UnlockOSThread: undoes one {@link #lockOSThread()}; at zero the goroutine may again
     * run on any thread. A call with no lock held does nothing (Go's rule).
     */
    public static void unlockOSThread() {
        G gp = Scheduler.getg();
        if (gp == null || gp.lockedExt == 0) {
            return;
        }
        if (--gp.lockedExt == 0) {
            gp.lockedm.lockedg = null;
            gp.lockedm = null;
        }
    }

    /**
     * runtime.Gosched: yields the processor; the current goroutine goes to the global run
     * queue, behind the work already there. On a platform thread: {@link Thread#yield()}.
     */
    public static void yield() {
        Scheduler.gosched();
    }

    /**
     * time.Sleep: parks the current goroutine for at least d. On a platform thread: sleeps
     * the thread.
     */
    public static void sleep(Duration d) {
        Timers.sleep(d);
    }

    /**
     * A preemption safe point, like the check in a Go function prologue: one volatile read on
     * the fast path; yields to the global queue if sysmon asked this goroutine to. Call it in
     * long loops. A no-op on a platform thread.
     */
    public static void checkpoint() {
        Scheduler.checkpoint();
    }

    /**
     * Runs blocking code (a JDBC call, file I/O, {@code Thread.sleep}) without holding up other
     * goroutines: the M lets go of its P while blocking runs, sysmon hands the P to another M if
     * it takes long, and afterwards the goroutine continues on whichever P it can get
     * (entersyscall/exitsyscall). On a platform thread it simply calls blocking.
     *
     * <p>blocking may itself make goroutine calls (a channel operation, select, a {@code Mutex},
     * {@code WaitGroup.await}, {@link #sleep}, {@link #yield}): each leaves the syscall for its
     * duration, taking a P as on exit, and enters it again afterwards (Go's cgocallbackg). As in
     * Go, the goroutine stays on its thread meanwhile (locked to it, as by {@link #lockOSThread},
     * for the call's duration), so blocking resumes after the call on the thread it began on,
     * with its ThreadLocals and thread-owned locks. A nested {@code syscall} simply runs its body.
     */
    public static <T> T syscall(Callable<T> blocking) throws Exception {
        G gp = Scheduler.getg();
        if (gp == null || gp.status() == G.SYSCALL) {
            return blocking.call(); // a platform thread, or already inside a syscall body
        }
        Scheduler.checkpoint(gp);
        Scheduler.entersyscall(gp);
        try {
            return blocking.call();
        } finally {
            Scheduler.exitsyscall(gp);
        }
    }

    /**
     * runtime.Goexit: ends the calling goroutine. Its {@code finally} blocks (and try-with-resources
     * closes: the cleanups a Go function defers) run on the way out; it is not a panic, so the
     * {@link SchedulerConfig.PanicPolicy} is not consulted and the runtime goes on. Goexit throws
     * {@link Goexit}, an {@link Error}, so that {@code catch (Exception e)} does not stop it; a
     * {@code catch (Throwable t)} or {@code catch (Error e)} does, and must rethrow it. An
     * exception thrown by a {@code finally} block on the way out replaces it, as a panic in a
     * deferred call during Goexit does in Go: caught, the goroutine simply goes on from the
     * catch; uncaught, it is a panic. Called by the main goroutine of {@link GoRuntime#run}, see
     * there. On a platform thread it throws the same Error, which ends the thread's current work
     * unless caught.
     *
     * @throws Goexit always
     */
    public static void goexit() {
        throw Goexit.INSTANCE;
    }

    /**
     * The unwinding of {@link #goexit()}. One shared instance without a stack trace: Goexit is
     * control flow, and it costs no allocation. JVM departure: Go's Goexit cannot be caught at
     * all; a Java frame that catches every Throwable sees this one and must rethrow it.
     */
    public static final class Goexit extends Error {
        private static final long serialVersionUID = 1L;
        static final Goexit INSTANCE = new Goexit();

        private Goexit() {
            super("runtime.Goexit", null, false, false);
        }
    }

    /** The current goroutine's id, or -1 on a platform thread. */
    public static long goid() {
        G gp = Scheduler.getg();
        return gp != null ? gp.goid : -1;
    }

    /** Whether the caller runs as a goroutine. */
    public static boolean inGoroutine() {
        return Scheduler.getg() != null;
    }

    /**
     * The runtime of the current goroutine.
     *
     * @throws IllegalStateException outside a goroutine
     */
    public static GoRuntime runtime() {
        return current("Go.runtime").sched.runtime;
    }

    /**
     * Pins the current goroutine to its P (Go's procPin): until {@link #procUnpin()} it is not
     * preempted and cannot park, so per-P data indexed by the returned id stays its own.
     * Returns -1 on a platform thread or inside a {@link #syscall} body (no P: nothing is pinned).
     */
    public static int procPin() {
        G gp = Scheduler.getg();
        if (gp == null) {
            return -1;
        }
        P pp = gp.m.p;
        if (pp == null) {
            return -1;
        }
        if (gp.locks == Short.MAX_VALUE) {
            throw new IllegalStateException("procPin nesting overflow (more than " + Short.MAX_VALUE + " pins held)");
        }
        gp.locks++;
        Coroutine.pinCurrent();
        return pp.id;
    }

    /** Undoes one {@link #procPin()}. A no-op on a platform thread. */
    public static void procUnpin() {
        G gp = Scheduler.getg();
        if (gp == null || gp.locks == 0) {
            return;
        }
        gp.locks--;
        Coroutine.unpinCurrent();
    }

    // =============================================================================================
    // pprof labels (Go: runtime/pprof Do, Labels, ForLabels; runtime's g.labels)
    // =============================================================================================

    /** Labels of platform threads inside withLabels; a goroutine keeps its own in its G. */
    private static final ThreadLocal<Map<String, String>> THREAD_LABELS = ThreadLocal.withInitial(Map::of);

    /**
     * pprof.Do: runs body with the current labels plus these (a key already set takes the new
     * value), then restores the old set, also when body throws. Goroutines started inside body
     * inherit the labels in force at their {@code go} call, and keep them for their whole life.
     * Labels show in {@link GoRuntime#goroutines()}, {@link GoRuntime#dumpGoroutines()}, leak
     * reports and traces. On a platform thread they apply to the goroutines it starts with
     * {@link GoRuntime#go(Runnable)}.
     *
     * @throws NullPointerException if labels, one of its keys or values, or body is null
     */
    public static void withLabels(Map<String, String> labels, Runnable body) {
        java.util.Objects.requireNonNull(labels, "labels");
        java.util.Objects.requireNonNull(body, "body");
        G gp = Scheduler.getg();
        Map<String, String> old = gp != null ? gp.labels() : THREAD_LABELS.get();
        Map<String, String> merged = mergeLabels(old, labels);
        setLabels(gp, merged);
        try {
            body.run();
        } finally {
            setLabels(gp, old);
        }
    }

    /**
     * The current goroutine's (or platform thread's) labels: an immutable map sorted by key,
     * empty when none, never null. Go: pprof.Label / ForLabels over the context's labels
     */
    public static Map<String, String> labels() {
        G gp = Scheduler.getg();
        return gp != null ? gp.labels() : THREAD_LABELS.get();
    }

    /** The labels a goroutine started by this platform thread inherits. */
    static Map<String, String> threadLabels() {
        return THREAD_LABELS.get();
    }

    private static void setLabels(G gp, Map<String, String> labels) {
        if (gp != null) {
            gp.ref.labels = labels;
            Trace trace = gp.sched.trace;
            if (trace.on && !labels.isEmpty()) {
                trace.recordLabels(gp.goid, labels);
            }
        } else if (labels.isEmpty()) {
            THREAD_LABELS.remove();
        } else {
            THREAD_LABELS.set(labels);
        }
    }

    /** old plus add, add winning; an unmodifiable map sorted by key (pprof keeps a sorted list). */
    static Map<String, String> mergeLabels(Map<String, String> old, Map<String, String> add) {
        if (add.isEmpty()) {
            return old;
        }
        java.util.TreeMap<String, String> m = new java.util.TreeMap<>(old);
        for (Map.Entry<String, String> e : add.entrySet()) {
            m.put(java.util.Objects.requireNonNull(e.getKey(), "label key"),
                    java.util.Objects.requireNonNull(e.getValue(), () -> "value of label " + e.getKey()));
        }
        return java.util.Collections.unmodifiableSortedMap(m);
    }

    private static G current(String what) {
        G gp = Scheduler.getg();
        if (gp == null) {
            throw new IllegalStateException(what + " called outside a goroutine");
        }
        return gp;
    }
}
