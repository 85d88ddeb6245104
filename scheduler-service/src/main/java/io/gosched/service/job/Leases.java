package io.gosched.service.job;

import java.time.Duration;

import io.gosched.service.job.spi.JobLease;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The ends of a lease the engine does not wait on: a failure to complete or release is logged and
 * left to the queue, which hands the ticket out again (stale, then dropped) after its ack wait.
 */
final class Leases {

    private static final Log log = LogFactory.getLog(Leases.class);

    private Leases() {
    }

    /** Acks the lease: the ticket leaves the queue. */
    static void complete(JobLease lease) {
        try {
            lease.complete();
        } catch (RuntimeException e) {
            log.debug("ack of " + lease + " failed; it comes back stale and is dropped then", e);
        }
    }

    /** Hands the ticket back at once. */
    static void release(JobLease lease) {
        release(lease, Duration.ZERO);
    }

    /** Hands the ticket back, to be delivered again after {@code delay}. */
    static void release(JobLease lease, Duration delay) {
        try {
            lease.release(delay);
        } catch (RuntimeException e) {
            log.debug("release of " + lease + " failed; it lapses after the ack wait instead", e);
        }
    }

    /**
     * A pause of the calling platform thread between two tries of the store or the queue (never a
     * goroutine's: it would hold its M); an interrupt ends it early and is kept.
     */
    static void pause(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
