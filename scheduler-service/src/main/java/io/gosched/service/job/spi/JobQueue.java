package io.gosched.service.job.spi;

import java.time.Duration;
import java.util.List;

/**
 * Where jobs wait for a runner: tickets in ten priority levels, each held back until its
 * {@code notBefore}, pulled by nodes that have room to run them.
 *
 * <h2>Order</h2>
 * {@link #pull} hands out tickets pinned to the calling node first, then the highest priority
 * level first, FIFO within a level. A ticket is never handed out before its {@code notBefore}
 * (the delay does not count against the lease's ack wait). Across nodes the order is that of the
 * pulls: a node that pulls later may start a higher-priority ticket after a lower one another
 * node already holds.
 *
 * <h2>Delivery</h2>
 * At least once: a ticket stays in the queue until its lease is completed; a lease that lapses
 * (its node died) hands the ticket out again, up to the queue's max-deliver, after which the
 * {@link LostHandler} gets it. Enqueuing the same ticket (job id and number) twice leaves one in
 * the queue, within the queue's duplicate window.
 *
 * <p>Thread-safe. {@link #pull} may block; never call it from a Reactor thread or a goroutine.
 * {@link #poll} never blocks, where the queue offers it ({@link #pollsWithoutBlocking}).
 */
public interface JobQueue {

    /**
     * Adds a ticket. Returns once the queue holds it durably.
     *
     * @throws io.gosched.service.error.BackendFullException when the queue is at its size limit
     * @throws io.gosched.service.error.BackendUnavailableException when the queue cannot be reached
     */
    void enqueue(JobTicket ticket);

    /**
     * Takes at most {@code room} tickets that may run now, in the order above, waiting up to
     * {@code maxWait} for the first one to arrive. Each comes as an open lease, kept alive by the
     * queue until the runner ends it. Returns an empty list when nothing is ready or the queue
     * cannot be reached (pulling is retried by the caller's loop; reachability is reported by
     * the backend's health, not by throwing here).
     *
     * @param room how many more jobs the caller's admission can start now; 0 returns at once
     */
    List<JobLease> pull(int room, Duration maxWait) throws InterruptedException;

    /**
     * True if {@link #poll} answers without blocking: under this process's short locks only, no
     * network, no waiting. Such a queue can be polled by the runner on the thread that just freed
     * a running slot, a goroutine included, so that the next job starts without a hand-off to
     * the thread that pulls. A queue across the network answers false (the default): its runner
     * pulls from a platform thread only.
     */
    default boolean pollsWithoutBlocking() {
        return false;
    }

    /**
     * How long a lease holds without renewal (the ack wait): the ticket of a runner that died is
     * handed out again after this.
     */
    default Duration leaseTime() {
        return Duration.ofSeconds(30);
    }

    /**
     * True if the queue holds a ticket of job {@code jobId}, of any number: waiting, delayed, or
     * handed out and not completed yet. A job left {@code running} with none has nothing that
     * would ever bring it back (the job service's orphan sweep acts on such jobs only). A
     * queue that cannot tell answers true, the default.
     *
     * @throws io.gosched.service.error.BackendUnavailableException when the queue cannot be reached
     */
    default boolean holdsTicketOf(String jobId) {
        return true;
    }

    /**
     * Takes at most {@code room} tickets that may run now, in the order of {@link #pull}, without
     * waiting for any: an empty list when none is ready. Only where {@link #pollsWithoutBlocking}
     * is true; pulls and polls of one node may interleave, each ticket is handed to one of them.
     *
     * @param room how many more jobs the caller's admission can start now; 0 returns at once
     * @throws UnsupportedOperationException where {@link #pollsWithoutBlocking} is false
     */
    default List<JobLease> poll(int room) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot be polled without blocking; use pull");
    }

    /**
     * Removes a ticket that waits (not one held under a lease) so it no longer takes queue
     * space: for a job cancelled while queued. Best effort: a ticket that is not found, or
     * already leased, simply turns stale under the claim protocol.
     */
    void withdraw(JobTicket ticket);

    /** Tickets waiting now, delayed ones included, across all nodes; may lag by a few seconds. */
    long depth();

    /**
     * Registers the one handler for tickets delivered max-deliver times without being completed.
     * The queue drops such a ticket only after the handler returned normally, and hands it to the
     * handler again (possibly on another node) if it threw.
     */
    void onLost(LostHandler handler);

    /** A ticket the queue gave up on: its leases lapsed {@code deliveries} times. */
    @FunctionalInterface
    interface LostHandler {
        void lost(JobTicket ticket, int deliveries) throws Exception;
    }
}
