package io.gosched.cluster.job;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.cluster.ClusterConnection;
import io.nats.client.Message;

/**
 * A pulled ticket message of {@code GOSCHED_JOBS}: complete is an ack the node does not wait for,
 * release a nak with delay; while open, {@link LeaseRenewer} sends its in-progress acks.
 */
final class NatsJobLease implements JobLease {

    private final Message message;
    private final JobTicket ticket;
    private final int delivery;
    private final ClusterConnection conn;
    private final LeaseRenewer renewer;
    /** Tells the pullers the ticket is back (a kick): a scan skips consumers it found empty. */
    private final Consumer<JobTicket> onRelease;
    private final AtomicBoolean open = new AtomicBoolean(true);

    NatsJobLease(Message message, JobTicket ticket, int delivery, ClusterConnection conn, LeaseRenewer renewer,
            Consumer<JobTicket> onRelease) {
        this.message = message;
        this.ticket = ticket;
        this.delivery = delivery;
        this.conn = conn;
        this.renewer = renewer;
        this.onRelease = onRelease;
        renewer.add(this);
    }

    @Override
    public JobTicket ticket() {
        return ticket;
    }

    @Override
    public int delivery() {
        return delivery;
    }

    long streamSequence() {
        return message.metaData().streamSequence();
    }

    @Override
    public void complete() {
        end();
        conn.check();
        // A plain ack, not one the server confirms: the engine does nothing with a confirmation
        // (Leases.complete only logs a failure), and an ack the server never gets costs what a
        // confirmed ack lost to a server killed before it wrote its consumer state costs already:
        // the ticket comes back after the ack wait, its record final or naming a newer ticket, and
        // the claim drops it as stale. Waiting for the +OK was a round trip and a message per job.
        try {
            message.ack();
        } catch (IllegalStateException e) {
            throw conn.translate("ack of job " + ticket.jobId(), e);
        }
    }

    @Override
    public void release(Duration delay) {
        end();
        conn.check();
        if (delay.isZero() || delay.isNegative()) {
            message.nak();
            onRelease.accept(ticket);
        } else {
            message.nakWithDelay(delay); // back after the delay, with no kick: the next full scan finds it
        }
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    /** Executed only by the renewer thread. */
    void renew() {
        if (open.get()) {
            message.inProgress();
        }
    }

    /** Stops renewals without telling the server: what a node's death looks like to it. */
    @Override
    public void abandon() {
        if (open.compareAndSet(true, false)) {
            renewer.remove(this);
        }
    }

    private void end() {
        if (!open.compareAndSet(true, false)) {
            throw new IllegalStateException("the lease on job " + ticket.jobId() + " ticket " + ticket.number() + " was already ended");
        }
        renewer.remove(this);
    }

    @Override
    public String toString() {
        return "lease on " + ticket.jobId() + " ticket " + ticket.number() + " (delivery " + delivery + ")";
    }
}
