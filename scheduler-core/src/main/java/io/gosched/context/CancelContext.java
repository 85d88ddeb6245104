package io.gosched.context;

/** A context with its own cancel function. Go: the CancelFunc returned with WithCancel. */
public interface CancelContext extends Context {

    /**
     * Cancels this context and every context derived from it: done() closes, err() becomes
     * {@link Context#CANCELED}. Idempotent; call it when the work is done to release the
     * parent's reference and the deadline timer.
     */
    void cancel();
}
