package io.gosched.service.job.spi;

import java.time.Duration;

/**
 * A runner's claim on one pulled {@link JobTicket}: while the lease is open no other node is
 * handed the ticket. The queue keeps the lease alive by itself, from a platform thread of its
 * own, never from the job's goroutines, so a job that hogs its P cannot let its lease lapse; it
 * lapses only when the holding process dies or is cut off from the queue for longer than the
 * queue's ack wait. Then the ticket is delivered again, to any node, with {@link #delivery()} one
 * higher.
 *
 * <p>A lease is ended exactly once, by {@link #complete()} or {@link #release(Duration)}; both
 * stop its renewal. Thread-safe.
 */
public interface JobLease {

    /** The ticket this lease holds. */
    JobTicket ticket();

    /**
     * How often the queue has handed out this ticket, this time included: 1 on the first
     * delivery, more after a lease on it lapsed (a takeover) or was released.
     */
    int delivery();

    /**
     * Removes the ticket from the queue for good: the job finished, was requeued under a new
     * ticket, or the ticket was stale. Need not wait for the queue to confirm: the protocol never
     * relies on it, since a completion the queue does not get brings the ticket back after the ack
     * wait, and its claim then finds it stale.
     *
     * @throws io.gosched.service.error.BackendUnavailableException if the queue cannot be reached; the
     *         lease then lapses and the ticket comes back, which the claim protocol treats as stale
     */
    void complete();

    /**
     * Hands the ticket back to be delivered again after {@code delay} (zero: at once), to this or
     * another node; counts as a delivery. For a node that pulled more than it can start (shutdown).
     */
    void release(Duration delay);

    /** True until {@link #complete()}, {@link #release} or {@link #abandon()} was called. */
    boolean isOpen();

    /**
     * Stops keeping the lease alive without telling the queue, as a process that died would: the
     * ticket comes back after the ack wait. For a runner that learned another node took its job
     * over (its record names a newer attempt): acking or releasing would touch the successor's
     * delivery. Idempotent.
     */
    void abandon();
}
