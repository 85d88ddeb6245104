package io.gosched.cluster.job;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterMetrics;
import io.gosched.service.job.spi.JobQueue.LostHandler;
import io.gosched.service.job.spi.JobTicket;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dead letters of the job queue: the server's max-deliveries advisories, captured by the
 * stream {@code GOSCHED_DEAD} so that none is missed while no node listens. Each is handed to the
 * {@link LostHandler}, then its ticket is deleted (a work queue would otherwise keep it for ever)
 * and the advisory acked. A handler that fails gets the advisory again shortly. Called by the
 * queue's dead-letter worker thread only, once a handler is set.
 */
final class DeadLetters {

    private static final Log log = LogFactory.getLog(DeadLetters.class);

    private final ClusterConnection conn;
    private final ClusterMetrics metrics;
    private volatile LostHandler handler;

    DeadLetters(ClusterConnection conn, ClusterMetrics metrics) {
        this.conn = conn;
        this.metrics = metrics;
    }

    void onLost(LostHandler handler) {
        this.handler = handler;
    }

    /** True once a handler is set: the worker fetches advisories only then, so none is acked unhandled. */
    boolean ready() {
        return handler != null;
    }

    /** Handles one advisory: the lost ticket goes to the handler, then it and the advisory go. */
    void handle(Message advisory) {
        MaxDeliveries a;
        try {
            a = MaxDeliveries.parse(advisory.getData());
        } catch (RuntimeException e) {
            log.warn("dropping an unreadable max-deliveries advisory: " + e.getMessage());
            advisory.term();
            return;
        }
        JobTicket t;
        try {
            t = TicketMessages.ticket(conn.management().getMessage(ClusterLayout.JOBS_STREAM, a.streamSequence()).getHeaders());
        } catch (JetStreamApiException gone) {
            advisory.ack(); // already handled by another node, or purged (withdrawn)
            return;
        } catch (IOException e) {
            advisory.nakWithDelay(Duration.ofSeconds(1));
            return;
        } catch (IllegalArgumentException e) {
            log.warn("dropping the dead letter at " + a.streamSequence() + ", it is not a job ticket: " + e.getMessage());
            deleteQuietly(a.streamSequence());
            advisory.ack();
            return;
        }
        try {
            handler.lost(t, a.deliveries());
        } catch (Exception e) {
            log.warn("the lost-job handler failed for job " + t.jobId() + "; it gets the ticket again shortly: " + e.getMessage());
            advisory.nakWithDelay(Duration.ofSeconds(2));
            return;
        }
        metrics.lost();
        deleteQuietly(a.streamSequence());
        advisory.ack();
    }

    private void deleteQuietly(long seq) {
        try {
            conn.management().deleteMessage(ClusterLayout.JOBS_STREAM, seq);
        } catch (IOException | JetStreamApiException e) {
            log.debug("dead ticket " + seq + " not deleted (gone already?)", e);
        }
    }

    /** The advisory {@code io.nats.jetstream.advisory.v1.max_deliver}: which stream message, how often delivered. */
    record MaxDeliveries(long streamSequence, int deliveries) {
        private static final JsonMapper JSON = JsonMapper.builder().build();

        static MaxDeliveries parse(byte[] data) {
            var node = JSON.readTree(data);
            if (!node.path("stream_seq").isNumber()) {
                throw new IllegalArgumentException("no stream_seq in " + new String(data, StandardCharsets.UTF_8));
            }
            return new MaxDeliveries(node.get("stream_seq").asLong(), node.path("deliveries").asInt());
        }
    }
}
