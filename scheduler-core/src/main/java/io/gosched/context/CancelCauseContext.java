package io.gosched.context;

/**
 * A cancellable context whose cancel records why. Go: the CancelCauseFunc returned with
 * WithCancelCause.
 */
public interface CancelCauseContext extends CancelContext {

    /**
     * Cancels this context and every context derived from it, as {@link #cancel()}, and records
     * cause as the reason: {@link Context#cause(Context)} of this context and of its descendants
     * then returns it (err() stays {@link Context#CANCELED}). A null cause records
     * {@link Context#CANCELED}. Only the first cancellation counts; later calls change nothing.
     */
    void cancel(Throwable cause);

    /** Same as {@code cancel(null)}. */
    @Override
    default void cancel() {
        cancel(null);
    }
}
