package io.gosched.service.budget;

import java.util.Locale;

/**
 * What holds bytes of the {@link MemoryBudget}: each kind is one tag value of
 * {@code gosched_api_retained_bytes{kind}} and one member of the budget's {@code heldBy}.
 */
public enum Retained {

    /** Named channels: their slot arrays and the values buffered in them. */
    CHANNELS("named channels: their buffers and the values in them"),
    /** Values of HTTP sends that wait for room or a receiver. */
    PENDING_SENDS("values of HTTP sends waiting for room or a receiver"),
    /** Requests of jobs that wait to run (queued, delayed or backing off). */
    QUEUED_JOBS("requests of jobs waiting to run"),
    /** Running jobs: their requests, the goroutine stacks reserved for them, their own channels. */
    RUNNING_JOBS("running jobs: requests, goroutine stacks, their own channels"),
    /** Finished jobs kept for reading: requests, results and errors. */
    FINISHED_JOBS("finished jobs kept for reading: requests, results, errors"),
    /** Idempotency-Key entries, which live as long as their job. */
    IDEMPOTENCY_KEYS("Idempotency-Key entries"),
    /** HTTP channel sends and receives in flight: their connection, timer and callbacks. */
    CHANNEL_CALLS("HTTP channel calls in flight"),
    /** Open server-sent event streams (telemetry and job events). */
    STREAMS("open SSE streams"),
    /** Flight recorder snapshots kept after a failed job or a latency spike (GET /api/v1/trace/flight/snapshots). */
    FLIGHT_SNAPSHOTS("flight recorder snapshots kept after a failed job or a latency spike");

    private final String tag;
    private final String description;

    Retained(String description) {
        this.tag = name().toLowerCase(Locale.ROOT);
        this.description = description;
    }

    /** The metric tag and JSON member name, e.g. {@code pending_sends}. */
    public String tag() {
        return tag;
    }

    public String description() {
        return description;
    }
}
