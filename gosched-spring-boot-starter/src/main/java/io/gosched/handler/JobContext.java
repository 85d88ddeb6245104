package io.gosched.handler;

import java.time.Instant;
import java.util.Optional;

import io.gosched.context.Context;

/**
 * What a {@link JobHandler} method knows of the attempt it runs in; declare a parameter of this
 * type to get it. Valid for the attempt's duration, from the attempt's goroutine and any goroutine
 * it starts.
 */
public interface JobContext {

    /**
     * The job's id: the same on every attempt, so a handler whose effect must happen once can
     * deduplicate by it (jobs run at least once: a retry, or a node lost mid-attempt, runs it again).
     */
    String jobId();

    /** The attempt's number, 1 for the first. */
    int attempt();

    /**
     * Cancelled when the job is cancelled ({@code DELETE /api/v1/jobs/{id}}), its {@code timeoutMs}
     * passes or the service shuts down: select on {@code context().done()} next to the handler's
     * own channels, or check {@code context().err()} between steps of a long computation.
     */
    Context context();

    /** The attempt's deadline (the job's {@code timeoutMs} from the attempt's start), if it has one. */
    default Optional<Instant> deadline() {
        return context().deadline();
    }

    /**
     * Reports how far the job has got: shown as the job's {@code progress} ({@code GET /api/v1/jobs/{id}},
     * a {@code progress} event on its {@code events} stream) while it runs, and its last report kept
     * after it ends. Cheap enough to call in a loop: it replaces one reference, and the service sends
     * the latest report a few times a second at most (reports in between are never seen: the last
     * one wins). Any goroutine of the attempt may call it.
     *
     * @param fraction  how much is done, 0 to 1 ({@code Double.NaN} for unknown); a value outside is clamped
     * @param message   what it is doing, or null; cut to its first 200 characters
     */
    void progress(double fraction, String message);

    /** Reports what the job is doing, without a fraction: {@code progress(Double.NaN, message)}. */
    default void progress(String message) {
        progress(Double.NaN, message);
    }
}
