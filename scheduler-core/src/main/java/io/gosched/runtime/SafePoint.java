package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The preemption check for code without safe points of its own. The gosched agent (module
 * {@code scheduler-agent}) inserts a call to {@link #poll()} at every loop back-edge and method
 * entry of the classes it is told to instrument, so that a tight loop yields at the runtime's
 * quantum, as Go 1.14+ preempts one asynchronously. Callable by hand too; it is
 * {@link Go#checkpoint()} with a cheaper fast path.
 *
 * <p>Go: the stack-guard check of every function prologue (runtime/stack.go newstack with
 * stackPreempt), which is what a preempt request poisons; asynchronous preemption itself
 * (runtime/preempt.go) has no JVM equivalent, so the check is compiled into the code instead.
 */
public final class SafePoint {
    /*
     * The fast path must cost one load when nobody is asked to yield, so it cannot find its own
     * goroutine (that takes M.current(), an out-of-line call, then two more loads). It reads one
     * JVM-wide word instead: pending, the number of runtimes that currently have a goroutine
     * asked to yield. Only when it is non-zero does poll() look for its goroutine.
     *
     * Raising (any thread): Sysmon.preemptone sets G.preempt, then raise(sched) flips the
     * runtime's Sched.safePointRaised false -> true (CAS) and, if it won, adds 1 to pending.
     * Lowering: sysmon after each round, and a goroutine that answers a request at poll(), look
     * for a goroutine still asked on the runtime's Ps (other than the one answering); if there is
     * none they flip the flag true -> false (CAS; the winner subtracts 1), then look once more
     * and raise again if a request arrived meanwhile. That second look closes the race with a
     * preemptone that set G.preempt after the first look but found the flag still up (its CAS
     * failed, so it added nothing): the volatile write of G.preempt precedes its failed CAS,
     * which precedes our successful one, so the second look sees it. A request is therefore
     * never hidden for longer than that window; a stale "up" only costs instrumented code the
     * slow path until the next lowering (at most one sysmon round, 20 us to 10 ms).
     */
    private static volatile int pending;
    private static final VarHandle PENDING;
    private static final VarHandle RAISED; // Sched.safePointRaised
    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PENDING = l.findStaticVarHandle(SafePoint.class, "pending", int.class);
            RAISED = l.findVarHandle(Sched.class, "safePointRaised", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private SafePoint() {
    }

    /**
     * A preemption safe point: yields the current goroutine if the runtime asked it to (it then
     * continues later, on whichever M runs it). One volatile load while no goroutine of any
     * runtime is asked; a no-op outside goroutines, and while the goroutine is pinned
     * ({@link Go#procPin()}).
     */
    public static void poll() {
        if (pending != 0) {
            pollSlow();
        }
    }

    private static void pollSlow() {
        M mp = M.current();
        if (mp == null) {
            return;
        }
        G gp = mp.curg();
        if (gp == null || !gp.preempt || gp.locks != 0 || gp.status() != G.RUNNING) {
            return; // in a Go.syscall body (SYSCALL): no P to give up, as in Scheduler.checkpoint
        }
        // This goroutine answers its request now: if it was the last one asked, lower the flag
        // before yielding, so other instrumented code stops taking this slow path.
        lowerIfAnswered(mp.sched, gp);
        Scheduler.gopreempt(gp);
    }

    /** Announces that a goroutine of s was asked to yield. Called right after setting G.preempt. */
    static void raise(Sched s) {
        if (!s.safePointRaised && RAISED.compareAndSet(s, false, true)) {
            PENDING.getAndAdd(1);
        }
    }

    /**
     * Lowers s's flag if no goroutine running on its Ps, other than answering (may be null), is
     * asked to yield. Executed by sysmon each round and by a goroutine answering at poll().
     */
    static void lowerIfAnswered(Sched s, G answering) {
        if (!s.safePointRaised || anyAsked(s, answering)) {
            return;
        }
        if (RAISED.compareAndSet(s, true, false)) {
            PENDING.getAndAdd(-1);
            if (anyAsked(s, answering)) {
                raise(s); // a request landed between the first look and the CAS
            }
        }
    }

    /** Lowers s's flag for good: its sysmon is stopping and nobody will lower it again. */
    static void withdraw(Sched s) {
        if (RAISED.compareAndSet(s, true, false)) {
            PENDING.getAndAdd(-1);
        }
    }

    private static boolean anyAsked(Sched s, G except) {
        P[] allp = s.allp;
        int procs = Math.min(s.gomaxprocs, allp.length);
        for (int i = 0; i < procs; i++) {
            if (asked(allp[i], except)) {
                return true;
            }
        }
        for (P sp : s.spares) {
            if (asked(sp, except)) {
                return true;
            }
        }
        return false;
    }

    private static boolean asked(P pp, G except) {
        M mp = pp.m;
        G gp = mp != null ? mp.curg() : null;
        return gp != null && gp != except && gp.preempt;
    }

    /** Runtimes with a goroutine asked to yield now; a snapshot, for tests and diagnostics. */
    static int pending() {
        return pending;
    }
}
