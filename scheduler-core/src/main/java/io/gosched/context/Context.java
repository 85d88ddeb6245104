package io.gosched.context;

import io.gosched.runtime.Chan;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * Carries a cancellation signal and a deadline across goroutines, as Go's context.Context.
 * {@link #done()} is a channel that is closed when the context is cancelled, so it can be
 * received from or used in a {@code Select} next to other channels; {@link #err()} then says
 * why. Cancelling a context cancels all contexts derived from it, never its parent.
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
        return withDeadline(parent, Instant.now().plus(d));
    }

    /** A child of parent cancelled at deadline d (or with parent). Go: context.WithDeadline */
    static CancelContext withDeadline(Context parent, Instant d) {
        Objects.requireNonNull(parent, "parent");
        Objects.requireNonNull(d, "d");
        return CancelCtx.withDeadline(parent, d);
    }

    /** A channel closed when this context is cancelled; never closed for {@link #background()}. */
    Chan<?> done();

    /** Null while not cancelled, then {@link #CANCELED} or {@link #DEADLINE_EXCEEDED}. */
    RuntimeException err();

    /** The time at which this context will be cancelled, if any. */
    Optional<Instant> deadline();
}
