package io.gosched.context;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Carries a cancellation signal and a deadline across goroutines, as Go's context.Context.
 * {@link #done()} is a channel that is closed when the context is cancelled, so it can be
 * received from or used in a {@code Select} next to other channels; {@link #err()} then says
 * why, and {@link #cause(Context)} the reason its canceller gave. Cancelling a context cancels
 * all contexts derived from it, never its parent. A context also carries request-scoped values
 * down the tree ({@link #withValue}, {@link #value(Object)}).
 *
 * <p>Implementations outside this package (Go's "other contexts") work as parents: their
 * cancellation is watched, and {@link #value(Object)} should ask the wrapped context for keys it
 * does not know.
 *
 * Go: context/context.go
 */
public interface Context {

    /** The error of a context cancelled by {@link CancelContext#cancel()}. Go: context.Canceled */
    ContextError CANCELED = new ContextError("context canceled");

    /** The error of a context whose deadline passed. Go: context.DeadlineExceeded */
    ContextError DEADLINE_EXCEEDED = new ContextError("context deadline exceeded");

    /** The root context: never cancelled, no deadline. Go: context.Background */
    static Context background() {
        return Background.INSTANCE;
    }

    /** A child of parent with its own cancel function. Go: context.WithCancel */
    static CancelContext withCancel(Context parent) {
        Objects.requireNonNull(parent, "parent");
        return CancelCtx.withDeadline(parent, null);
    }

    /** A child of parent cancelled after d (or with parent). Go: context.WithTimeout */
    static CancelContext withTimeout(Context parent, Duration d) {
        Objects.requireNonNull(d, "d");
        return withDeadline(parent, io.gosched.time.Time.now().plus(d));
    }

    /** A child of parent cancelled at deadline d (or with parent). Go: context.WithDeadline */
    static CancelContext withDeadline(Context parent, Instant d) {
        Objects.requireNonNull(parent, "parent");
        Objects.requireNonNull(d, "d");
        return CancelCtx.withDeadline(parent, d);
    }

    /**
     * A child of parent that carries key with value; {@code value(key)} on it and on its
     * descendants returns value (null is allowed) unless a nearer context sets key again. Keys
     * are compared with {@code equals}; use a key type of your own (a private class or enum, as
     * Go recommends an unexported type) so that packages cannot collide. Use values for
     * request-scoped data, not to pass optional parameters.
     *
     * @throws NullPointerException when parent or key is null ("nil key")
     *     Go: context.WithValue
     */
    static Context withValue(Context parent, Object key, Object value) {
        return new ValueCtx(parent, key, value);
    }

    /**
     * A child of parent whose cancel takes a cause; see {@link CancelCauseContext#cancel(Throwable)}.
     * Go: context.WithCancelCause
     */
    static CancelCauseContext withCancelCause(Context parent) {
        Objects.requireNonNull(parent, "parent");
        return CancelCtx.withDeadline(parent, null);
    }

    /**
     * Why c was cancelled: the cause given to the {@link CancelCauseContext#cancel(Throwable)} that
     * cancelled it or an ancestor; {@link #DEADLINE_EXCEEDED} or the deadline's cause for a passed
     * deadline; {@link #CANCELED} for a plain cancel; null while c is not cancelled. For a context
     * of another implementation without a cancellable context of this package under it, its err().
     * Go: context.Cause
     */
    static Throwable cause(Context c) {
        Objects.requireNonNull(c, "c");
        if (ValueCtx.lookup(c, CancelCtx.KEY) instanceof CancelCtx cc) {
            return cc.cause();
        }
        // Not a descendant of a cancellable context of this package: no cause, but a context of
        // another implementation may still have an error.
        return c.err();
    }

    /**
     * As {@link #withDeadline}, and when the deadline passes, {@link #cause} reports cause
     * (err() still reports {@link #DEADLINE_EXCEEDED}). The returned cancel sets no cause. If the
     * parent's deadline is earlier, that one applies and cause is not used, as in Go.
     * Go: context.WithDeadlineCause
     */
    static CancelContext withDeadlineCause(Context parent, Instant d, Throwable cause) {
        Objects.requireNonNull(parent, "parent");
        Objects.requireNonNull(d, "d");
        return CancelCtx.withDeadline(parent, d, cause);
    }

    /** {@link #withDeadlineCause} at now + t. Go: context.WithTimeoutCause */
    static CancelContext withTimeoutCause(Context parent, Duration t, Throwable cause) {
        Objects.requireNonNull(t, "t");
        return withDeadlineCause(parent, io.gosched.time.Time.now().plus(t), cause);
    }

    /**
     * Arranges for f to run in its own goroutine once c is cancelled (at once if it already is),
     * at most once. The goroutine belongs to the runtime of the goroutine that called afterFunc
     * (a virtual thread when it was called outside any goroutine or that runtime has shut down).
     * Returns Go's stop(): it stops the association and returns true if that prevented f from
     * running, false if f has been started or stop was called already. A cancellation does not
     * wait for f.
     * Go: context.AfterFunc
     */
    static BooleanSupplier afterFunc(Context c, Runnable f) {
        Objects.requireNonNull(c, "c");
        Objects.requireNonNull(f, "f");
        AtomicBoolean once = new AtomicBoolean(); // Go: afterFuncCtx.once, taken by the run or by stop
        GoRuntime rt = Go.inGoroutine() ? Go.runtime() : null;
        CancelCtx a = CancelCtx.afterFunc(c, () -> {
            if (once.compareAndSet(false, true)) {
                if (rt != null && !rt.isShutdown()) {
                    rt.go(f);
                } else {
                    Thread.ofVirtual().name("gosched-context-afterfunc").start(f);
                }
            }
        });
        return () -> {
            if (!once.compareAndSet(false, true)) {
                return false;
            }
            a.cancel(true, CANCELED, null); // leave c's children
            return true;
        };
    }

    /**
     * A child of parent with its values but not its cancellation: never done, no deadline, and
     * neither err() nor {@link #cause} ever report anything. Go: context.WithoutCancel
     */
    static Context withoutCancel(Context parent) {
        return new WithoutCancelCtx(parent);
    }

    /** A channel closed when this context is cancelled; never closed for {@link #background()}. */
    Chan<?> done();

    /** Null while not cancelled, then {@link #CANCELED} or {@link #DEADLINE_EXCEEDED}. */
    RuntimeException err();

    /** The time at which this context will be cancelled, if any. */
    Optional<Instant> deadline();

    /**
     * The value this context or its nearest ancestor carries for key (see {@link #withValue}),
     * or null. Go: Context.Value
     */
    Object value(Object key);
}
