package io.gosched.context;

/**
 * Why a context was cancelled: {@link Context#CANCELED} or {@link Context#DEADLINE_EXCEEDED}.
 * Compare by identity, as Go compares errors.Is(err, context.Canceled). Carries no stack
 * trace: it is a value, thrown only by callers who choose to.
 *
 * Go: context.Canceled, context.DeadlineExceeded
 */
public final class ContextError extends RuntimeException {

    ContextError(String message) {
        super(message, null, false, false);
    }
}
