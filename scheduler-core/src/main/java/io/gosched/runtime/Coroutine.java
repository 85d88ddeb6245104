package io.gosched.runtime;

import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;

/**
 * The one class that touches {@code jdk.internal.vm.Continuation}.
 *
 * <p>It exists because the JDK's public face of continuations is the virtual thread, whose
 * scheduler is a ForkJoinPool we cannot replace with Go's G/M/P rules. The internal
 * {@code Continuation} is the same stackful coroutine virtual threads are built on: {@link #run()}
 * mounts it on the calling platform thread (an M) until it yields or ends, and {@link
 * #yieldToScheduler()} unmounts it, freezing its frames into a heap stack chunk. This is not
 * Go's {@code mcall}: there is no switch to a g0 stack, the scheduler simply continues on the
 * M's own stack after {@code run()} returns.
 *
 * <p>Requires {@code --add-exports java.base/jdk.internal.vm=ALL-UNNAMED} (the project's jars
 * carry it as an {@code Add-Exports} manifest entry); {@code GoRuntime.start} checks for it first
 * and names the flag when it is missing.
 */
final class Coroutine extends Continuation {

    static final ContinuationScope SCOPE = new ContinuationScope("goroutine");

    /** The goroutine this coroutine runs. */
    final G g;

    Coroutine(G g) {
        super(SCOPE, g);
        this.g = g;
    }

    /**
     * The goroutine mounted on the calling thread, or null when none is (scheduler code on an M,
     * a platform thread). Fresh even in compiled goroutine code that migrated between Ms: the
     * JDK finds the mounted continuation through the carrier thread, read with a plain load,
     * never through the value C2 keeps for Thread.currentThread() (see "The current thread" in M).
     */
    static G currentG() {
        Continuation c = Continuation.getCurrentContinuation(SCOPE);
        return c != null ? ((Coroutine) c).g : null;
    }

    /**
     * Unmounts the running coroutine and returns to the M's scheduling loop. Returns false when
     * the frames are pinned (a native frame on the stack, or {@link #pin()} in effect), in which
     * case the caller keeps running on the same M.
     * Executed only by the goroutine itself.
     */
    static boolean yieldToScheduler() {
        return Continuation.yield(SCOPE);
    }

    /** True while a {@code procPin} or a native frame forbids yielding. */
    static boolean pinned() {
        return Continuation.isPinned(SCOPE);
    }

    /** Forbids yielding until {@link #unpinCurrent()}: Go's {@code procPin}. */
    static void pinCurrent() {
        Continuation.pin();
    }

    static void unpinCurrent() {
        Continuation.unpin();
    }

    @Override
    protected void onPinned(Continuation.Pinned reason) {
        // Yield is refused; the goroutine stays mounted. Callers decide what that means
        // (Gosched and preemption simply continue; gopark reports a clear error).
    }
}
