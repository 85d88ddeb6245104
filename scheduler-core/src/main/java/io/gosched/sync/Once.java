package io.gosched.sync;

import io.gosched.runtime.Go;
import io.gosched.runtime.PanicNilException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs an action exactly once, Go's {@code sync.Once}: the first {@link #run(Runnable)} runs its
 * action; every call returns only after that action has finished. An action that throws still counts
 * as done (it is not retried), as in Go. Calling {@code run} on the same Once from inside its own
 * action deadlocks.
 *
 * <p>{@link #onceFunc}, {@link #onceValue} and {@link #onceValues} wrap a function so that it runs
 * once however often, and from however many goroutines, the wrapper is called (Go 1.21).
 *
 * <p>Go: sync/once.go, sync/oncefunc.go
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

    /**
     * A function that runs f the first time it is called and does nothing on later calls; every
     * call returns only after that first run finished. If f throws, every call throws the same
     * exception (the first with its original stack trace), and f is still not run again. If f
     * ends its goroutine by {@link Go#goexit()}, every call, the first included, throws a {@link
     * PanicNilException} (Go 1.21+: a {@code PanicNilError}). f is dropped once it ran, so what
     * it captures can be garbage-collected while the wrapper lives.
     * Go: sync.OnceFunc
     */
    public static Runnable onceFunc(Runnable f) {
        Objects.requireNonNull(f, "f");
        OnceCall<Object> c = new OnceCall<>(() -> {
            f.run();
            return null;
        });
        return c::get;
    }

    /**
     * A function that calls f the first time it is called and returns f's result on every call;
     * as {@link #onceFunc}, a throwing f makes every call throw the same exception.
     * Go: sync.OnceValue
     */
    public static <T> Supplier<T> onceValue(Supplier<T> f) {
        Objects.requireNonNull(f, "f");
        return new OnceCall<>(f)::get;
    }

    /**
     * Go's two-result OnceValues, the pair carried in one entry: f runs once and every call
     * returns the same entry (or throws the same exception), as {@link #onceValue}.
     * Go: sync.OnceValues
     */
    public static <T1, T2> Supplier<Map.Entry<T1, T2>> onceValues(Supplier<Map.Entry<T1, T2>> f) {
        return onceValue(f);
    }

    /**
     * The state behind the once-wrappers (Go: the struct oncefunc.go allocates once). The action
     * given to {@link Once#run} is built here once, so a call after the first allocates nothing.
     */
    private static final class OnceCall<T> {
        private final Once once = new Once();
        private final Runnable action = this::callOnce;
        /** Cleared after the call so that f and what it captures can be collected. */
        private Supplier<T> f;
        // Written inside the once's action, read after run() returned: ordered by the Once.
        private boolean valid;
        private T value;
        private Throwable thrown;

        OnceCall(Supplier<T> f) {
            this.f = f;
        }

        T get() {
            once.run(action);
            if (!valid) {
                throw OnceCall.<RuntimeException>rethrow(thrown);
            }
            return value;
        }

        private void callOnce() {
            Supplier<T> g = f;
            f = null; // do not keep f alive after invoking it
            try {
                value = g.get();
                valid = true; // set only if f did not throw
            } catch (Go.Goexit exit) {
                // Go: the deferred recover() sees no panic during a Goexit and re-panics with its
                // nil, which Go 1.21+ turns into a PanicNilError, in this caller and every later
                // one. No caller's goroutine ends silently for f.
                thrown = new PanicNilException("the function given to Once.onceFunc/onceValue/onceValues ended by Go.goexit()");
                throw (PanicNilException) thrown;
            } catch (Throwable t) {
                thrown = t;
                throw t; // the first caller sees f's own exception, with its stack trace
            }
        }

        /** Throws t as it is; checked exceptions can reach here only by a sneaky throw inside f. */
        @SuppressWarnings("unchecked")
        private static <E extends Throwable> E rethrow(Throwable t) throws E {
            throw (E) t;
        }
    }

    /** Whether the action has run; for tests and diagnostics. */
    boolean isDone() {
        return done != 0;
    }
}
