package io.gosched.cluster.job;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.gosched.cluster.ClusterConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Keeps every open {@link NatsJobLease} of this node alive: an in-progress ack for each, every
 * third of the ack wait, from one platform thread of its own.
 *
 * <p>Why a thread of its own: a lease renewed by the job's goroutines lapses when they hog their
 * P or block, and the job is then run twice (the stalled-job reports of Bull and BullMQ). This
 * thread runs no job code and blocks on nothing but its timer; an in-progress ack is a publish
 * that never waits for the server. While NATS is unreachable it skips the round (the publish
 * would only fill the reconnect buffer); a lease whose renewals stop for the whole ack wait
 * lapses, and the ticket goes to another node, which is the point.
 */
final class LeaseRenewer implements AutoCloseable {

    private static final Log log = LogFactory.getLog(LeaseRenewer.class);

    private final ClusterConnection conn;
    private final Set<NatsJobLease> open = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;
    private volatile long renewals;

    LeaseRenewer(ClusterConnection conn, Duration every) {
        this.conn = conn;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = Thread.ofPlatform().name("gosched-lease-renewer").daemon(true).unstarted(r);
            t.setPriority(Thread.MAX_PRIORITY); // a starved renewer is a lapsed lease
            return t;
        });
        long ms = Math.max(10, every.toMillis());
        timer.scheduleAtFixedRate(this::renewAll, ms, ms, TimeUnit.MILLISECONDS);
    }

    void add(NatsJobLease lease) {
        open.add(lease);
    }

    void remove(NatsJobLease lease) {
        open.remove(lease);
    }

    int openLeases() {
        return open.size();
    }

    /** In-progress acks sent so far. */
    long renewals() {
        return renewals;
    }

    /** Executed only by the renewer thread. */
    private void renewAll() {
        if (!conn.isUp()) {
            return;
        }
        for (NatsJobLease lease : open) {
            try {
                lease.renew();
                renewals++;
            } catch (RuntimeException e) {
                log.debug("renewal of the lease on " + lease.ticket().jobId() + " failed; the next round tries again", e);
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
