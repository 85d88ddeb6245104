package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.gosched.cluster.ClusterConnection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Statistics;
import org.junit.jupiter.api.Test;

/**
 * What one job costs in NATS, counted on a real nats-server by the node's own connection: the
 * requests it waits for an answer to (JetStream publishes with their PubAck, KV writes, reads),
 * and every message it sends. The idle rate (heartbeat, the consumer-info poller, the scan's
 * pulls) is measured first and taken off. docs/cluster.md, "What a job costs in NATS messages",
 * maps each of them.
 *
 * <p>A job accepted and run by the same node waits for four: the record's create and the ticket's
 * publish (the HTTP answer), the claim's compare-and-set and the final record's. The claim starts
 * from the record as this node created it (no read back), and the ticket's ack is not waited for.
 * Issue 47 aims at three (one message for the submission); the bound below is what the protocol
 * gives today, so that any exchange added to the hot path fails here.
 */
class NatsMessagesPerJobTest extends OnOneNatsServer {

    /** Requests per job a node waits for: create, ticket, claim, final record (measured 3.96 to 4.02; 5.03 with the claim's read). */
    static final double MAX_REQUESTS_PER_JOB = 4.25;
    /**
     * Messages per job the node sends: the four above, the kick, the ack, and shares of the live
     * counters and pulls, which depend on the pace (a slower machine pulls more often per job):
     * measured 7.1 to 7.2 here, 7.6 to 7.7 with the claim's read; loose, so that only a message
     * added to every job fails it.
     */
    static final double MAX_SENT_PER_JOB = 8.5;

    static final int JOBS = 400;

    @Test
    void aJobWaitsForFourRequestsAndSendsFewMessages() throws Exception {
        ClusterNode node = node("node-a");
        ClusterConnection conn = node.bean(ClusterConnection.class);
        Counter succeeded = node.bean(MeterRegistry.class).counter("gosched.jobs.finished", "state", "succeeded");
        Map<String, Object> job = Map.of("workload", Map.of("steps", List.of(Map.of("op", "yield"))));
        node.submit(job); // warm: the first job's classes, connections and consumers
        awaitCount(succeeded, 1);

        Statistics stats = conn.nats().getStatistics();
        long idleFrom = System.nanoTime();
        long idleRequests = stats.getRequestsSent();
        long idleSent = stats.getOutMsgs();
        Thread.sleep(3_000);
        double idleSeconds = (System.nanoTime() - idleFrom) / 1e9;
        double idleRequestsPerSecond = (stats.getRequestsSent() - idleRequests) / idleSeconds;
        double idleSentPerSecond = (stats.getOutMsgs() - idleSent) / idleSeconds;

        long from = System.nanoTime();
        long requests0 = stats.getRequestsSent();
        long sent0 = stats.getOutMsgs();
        ExecutorService submitters = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> all = new java.util.ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                all.add(submitters.submit(() -> node.submit(job)));
            }
            for (Future<?> f : all) {
                f.get();
            }
        } finally {
            submitters.shutdown();
        }
        awaitCount(succeeded, JOBS + 1);
        double seconds = (System.nanoTime() - from) / 1e9;
        double requests = (stats.getRequestsSent() - requests0 - idleRequestsPerSecond * seconds) / JOBS;
        double sent = (stats.getOutMsgs() - sent0 - idleSentPerSecond * seconds) / JOBS;
        String measured = String.format("per job: %.2f requests waited for, %.2f messages sent (%d jobs in %.1f s; idle %.1f requests/s, %.1f sent/s)",
                requests, sent, JOBS, seconds, idleRequestsPerSecond, idleSentPerSecond);
        System.out.println(measured);
        assertThat(requests).as(measured).isLessThanOrEqualTo(MAX_REQUESTS_PER_JOB);
        assertThat(sent).as(measured).isLessThanOrEqualTo(MAX_SENT_PER_JOB);
    }

    private static void awaitCount(Counter c, double n) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (c.count() < n) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("only " + (long) c.count() + " of " + (long) n + " jobs succeeded within 60 s");
            }
            Thread.sleep(20);
        }
    }
}
