package io.gosched.service;

import java.util.concurrent.atomic.AtomicReference;

import io.gosched.service.error.ShuttingDownException;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * This node's one shutdown state, which the job service and the named channels share: a node
 * stops as a whole, in the order its lifecycle promises ({@code RuntimeLifecycle}).
 * <pre>
 *   OPEN ──▶ DRAINING ──▶ STOPPING ──▶ CLOSED
 * </pre>
 * The state only moves forward, through {@link #transition}, which refuses a move back; a move
 * may skip states ({@link #advance} from OPEN straight to STOPPING drains too).
 *
 * <p>Thread-safe: one atomic state; the drain signal is emitted once, by the move out of OPEN.
 */
public final class ServiceShutdown {

    /** Where the node stands. */
    public enum State {
        /** Takes new work. */
        OPEN,
        /**
         * The application is closing: new jobs, retries, channels, sends and receives are refused
         * ({@link ShuttingDownException}), job event streams end and pending HTTP channel calls are
         * answered "shutdown", so that the web server's drain has nothing left that waits. Running
         * jobs go on, and the dispatcher still starts queued ones.
         */
        DRAINING,
        /**
         * The job service stops its jobs: it takes nothing more from the queue, and cancels (a store
         * in this process) or hands back (a shared store) what it holds.
         */
        STOPPING,
        /** The job service's threads are stopped. */
        CLOSED
    }

    private final AtomicReference<State> state = new AtomicReference<>(State.OPEN);
    private final Sinks.Empty<Void> drain = Sinks.empty();

    /** Where the node stands now. */
    public State state() {
        return state.get();
    }

    /** True once the node reached {@code s} or a later state. */
    public boolean reached(State s) {
        return state.get().compareTo(s) >= 0;
    }

    /**
     * Moves from {@code from} to {@code to}, forward only.
     *
     * @return false if the state is no longer {@code from} (another caller moved it)
     * @throws IllegalStateException for a move that does not go forward
     */
    public boolean transition(State from, State to) {
        if (to.compareTo(from) <= 0) {
            throw new IllegalStateException("illegal shutdown transition " + from + " -> " + to);
        }
        if (!state.compareAndSet(from, to)) {
            return false;
        }
        if (from == State.OPEN) {
            drain.tryEmitEmpty();
        }
        return true;
    }

    /** Moves forward to {@code to} unless the node is there or beyond already. Idempotent. */
    public void advance(State to) {
        State s;
        while ((s = state.get()).compareTo(to) < 0) {
            if (transition(s, to)) {
                return;
            }
        }
    }

    /** @throws ShuttingDownException once the node drains: it takes no new work */
    public void refuseNewWork() {
        if (reached(State.DRAINING)) {
            throw new ShuttingDownException();
        }
    }

    /** Completes when the node starts draining (at once if it has). */
    public Mono<Void> draining() {
        return drain.asMono();
    }
}
