package io.gosched.sync;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Runs an action exactly once, Go's {@code sync.Once}: the first {@link #run(Runnable)} runs its
 * action; every call returns only after that action has finished. An action that throws still counts
 * as done (it is not retried), as in Go. Calling {@code run} on the same Once from inside its own
 * action deadlocks.
 *
 * <p>Go: sync/once.go
 */
public final class Once {
    private static final VarHandle DONE;
    static {
        try {
            DONE = MethodHandles.lookup().findVarHandle(Once.class, "done", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Whether the action has run. Read with acquire in the fast path and written with release after
     * the action, so a caller that sees 1 also sees the action's effects (Go's "the hot path").
     */
    private volatile int done;
    private final Mutex m = new Mutex();

    /** Runs f if no action has run on this Once yet; returns after the (first) action completed. Go: sync/once.go Once.Do */
    public void run(Runnable f) {
        // Note: a CAS here ("if DONE.compareAndSet(0, 1) f.run()") would be wrong: a second caller
        // would return before the winner's f finished. Hence the slow path with a mutex.
        if ((int) DONE.getAcquire(this) == 0) {
            doSlow(f);
        }
    }

    private void doSlow(Runnable f) {
        m.lock();
        try {
            if (done == 0) {
                try {
                    f.run();
                } finally {
                    DONE.setRelease(this, 1);
                }
            }
        } finally {
            m.unlock();
        }
    }

    /** Whether the action has run; for tests and diagnostics. */
    boolean isDone() {
        return done != 0;
    }
}
