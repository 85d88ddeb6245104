package io.gosched.cluster.job;

import io.gosched.testing.Await;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.gosched.service.error.BackendFullException;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterMetrics;
import io.gosched.cluster.ClusterProperties;
import io.gosched.cluster.NatsTestBase;
import io.gosched.cluster.TestNodes;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The job queue's promises, against a real NATS server: those of every queue
 * ({@link io.gosched.service.job.spi.JobQueueContract}, which the in-memory queue passes too), and
 * JetStream's own: renewals, the server's dedupe and purge, limits, outages, durability. Each test
 * gets a fresh server; "nodes" are separate connections.
 */
abstract class NatsJobQueueContract extends NatsTestBase implements io.gosched.service.job.spi.JobQueueContract {

    static final Duration ACK_WAIT = Duration.ofSeconds(1);

    ClusterProperties props(String node, int maxDeliver) {
        return TestNodes.properties(nats.url(), node, ACK_WAIT, maxDeliver);
    }

    @Override
    public NatsJobQueue queue(String node) {
        return queue(props(node, 3), new SimpleMeterRegistry());
    }

    @Override
    public Duration ackWait() {
        return ACK_WAIT;
    }

    @Override
    public int maxDeliver() {
        return 3;
    }

    NatsJobQueue queue(ClusterProperties p, SimpleMeterRegistry registry) {
        ClusterConnection c = nodes.connect(p);
        return nodes.track(NatsJobQueue.start(c, new ClusterMetrics(registry, p.nodeId()), Clock.systemUTC()));
    }

    static JobTicket ticket(String id, int priority) {
        return JobTicket.first(id, priority, null);
    }

    static List<String> ids(List<JobLease> leases) {
        return leases.stream().map(l -> l.ticket().jobId()).toList();
    }

    static void completeAll(List<JobLease> leases) {
        leases.forEach(JobLease::complete);
    }






    /** A pull is a round trip to NATS: the engine must never make one from a goroutine, so it refills no slot in place here. */
    @Test
    void theQueueOffersNoPollWithoutBlocking() throws Exception {
        NatsJobQueue a = queue("a");
        assertThat(a.pollsWithoutBlocking()).isFalse();
        assertThatThrownBy(() -> a.poll(1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aLeaseNotRenewedLapsesAfterTheAckWaitAndTheTicketGoesToAnotherNode() throws Exception {
        SimpleMeterRegistry bMeters = new SimpleMeterRegistry();
        NatsJobQueue a = queue("a");
        NatsJobQueue b = queue(props("b", 3), bMeters);
        a.enqueue(ticket("job-1", 5));
        List<JobLease> held = a.pull(1, Duration.ofSeconds(1));
        assertThat(held).hasSize(1);
        long t0 = System.nanoTime();
        a.abandon(held.getFirst()); // node a "dies": its renewals stop
        List<JobLease> taken = new ArrayList<>();
        while (taken.isEmpty() && System.nanoTime() - t0 < Duration.ofSeconds(10).toNanos()) {
            taken = b.pull(1, Duration.ofMillis(200));
        }
        long afterMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(ids(taken)).containsExactly("job-1");
        assertThat(taken.getFirst().delivery()).isEqualTo(2);
        assertThat(afterMs).as("not before the ack wait ran out").isGreaterThanOrEqualTo(ACK_WAIT.toMillis() - 100);
        assertThat(bMeters.get("gosched.jobs.redelivered").tag("node", "b").counter().count()).isEqualTo(1.0);
        completeAll(taken);
    }

    @Test
    void aRenewedLeaseHoldsForManyAckWaits() throws Exception {
        // 2 s, renewed every 667 ms: room for a busy shared machine to delay a renewal or two
        Duration ackWait = Duration.ofSeconds(2);
        NatsJobQueue a = queue(TestNodes.properties(nats.url(), "a", ackWait, 3), new SimpleMeterRegistry());
        NatsJobQueue b = queue(TestNodes.properties(nats.url(), "b", ackWait, 3), new SimpleMeterRegistry());
        a.enqueue(ticket("job-1", 5));
        List<JobLease> held = a.pull(1, Duration.ofSeconds(1));
        assertThat(held).hasSize(1);
        long end = System.nanoTime() + ackWait.multipliedBy(3).toNanos();
        while (System.nanoTime() < end) {
            assertThat(b.pull(1, Duration.ofMillis(250))).as("b must not get a ticket a still holds").isEmpty();
        }
        assertThat(a.renewals()).as("in-progress acks sent").isGreaterThanOrEqualTo(4);
        held.getFirst().complete();
        assertThat(b.pull(1, Duration.ofSeconds(2))).as("completed: gone for good").isEmpty();
    }

    @Test
    void aTicketWhoseLeasesLapseMaxDeliverTimesGoesToTheLostHandlerOnceAndLeavesTheQueue() throws Exception {
        SimpleMeterRegistry aMeters = new SimpleMeterRegistry();
        SimpleMeterRegistry bMeters = new SimpleMeterRegistry();
        NatsJobQueue a = queue(props("a", 2), aMeters);
        NatsJobQueue b = queue(props("b", 2), bMeters);
        List<String> lost = new CopyOnWriteArrayList<>();
        a.onLost((t, deliveries) -> lost.add(t.jobId() + "/" + t.number() + "/" + deliveries));
        b.onLost((t, deliveries) -> lost.add(t.jobId() + "/" + t.number() + "/" + deliveries));
        a.enqueue(ticket("job-doomed", 5));
        for (NatsJobQueue q : List.of(a, b)) { // two deliveries, each "dies"
            List<JobLease> got = List.of();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (got.isEmpty() && System.nanoTime() < deadline) {
                got = q.pull(1, Duration.ofMillis(200));
            }
            assertThat(got).hasSize(1);
            q.abandon(got.getFirst());
        }
        // The server notices the last lapse when it next looks for a message to deliver, i.e. on
        // a pull; idle nodes pull all the time. Nothing more may be delivered meanwhile.
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (lost.isEmpty() && System.nanoTime() < deadline) {
            assertThat(a.pull(1, Duration.ofMillis(200))).as("no third delivery").isEmpty();
        }
        assertThat(lost).as("the lost handler was called").isNotEmpty();
        Thread.sleep(500);
        assertThat(lost).containsExactly("job-doomed/1/2");
        a.refreshStats();
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> messages(a) == 0)).as("the dead ticket was deleted").isTrue();
        assertThat(aMeters.get("gosched.jobs.lost").counter().count() + bMeters.get("gosched.jobs.lost").counter().count())
                .as("counted once, by the node that handled it").isEqualTo(1.0);
    }

    long messages(NatsJobQueue q) {
        try {
            return nodes.connect("probe-" + System.nanoTime()).management().getStreamInfo(ClusterLayout.JOBS_STREAM).getStreamState()
                    .getMsgCount();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A scan asks only the consumers a kick named since a fetch found them empty: after a scan
     * over an empty queue none is named; a kick names exactly its ticket's consumer (its priority,
     * or this node's pinned consumer, never another node's); and a ticket released at once by one
     * node names its consumer on the others, which take it without waiting for a full scan.
     */
    @Test
    void kicksNameTheConsumersAScanAsks() throws Exception {
        NatsJobQueue a = queue("a");
        NatsJobQueue b = queue("b");
        assertThat(a.pull(5, Duration.ZERO)).isEmpty();
        assertThat(b.pull(5, Duration.ZERO)).isEmpty();
        assertThat(a.namedConsumers()).as("all found empty").isZero();

        a.enqueue(ticket("job-ready", 7));
        Await.until("the kick named ready-p7 on b", Duration.ofSeconds(5), () -> b.namedConsumers() == 1);
        a.enqueue(new JobTicket("job-pinned-b", 1, 3, null, "b"));
        Await.until("the kick named b's pinned consumer on b", Duration.ofSeconds(5), () -> b.namedConsumers() == 2);
        assertThat(Await.holdsWithin(Duration.ofMillis(500), () -> a.namedConsumers() == 1))
                .as("a's pinned consumer is not named by a ticket pinned to b").isTrue();

        List<JobLease> got = b.pull(5, Duration.ofSeconds(2));
        assertThat(ids(got)).containsExactly("job-pinned-b", "job-ready");
        assertThat(b.namedConsumers()).as("both found empty once drained").isZero();

        Await.until("a's ready-p7 is named (it did not fetch yet)", Duration.ofSeconds(5), () -> a.namedConsumers() == 1);
        assertThat(a.pull(5, Duration.ZERO)).as("b holds it").isEmpty();
        assertThat(a.namedConsumers()).isZero();
        got.get(1).release(Duration.ZERO);
        Await.until("the release named ready-p7 on a", Duration.ofSeconds(5), () -> a.namedConsumers() == 1);
        assertThat(ids(a.pull(5, Duration.ZERO))).containsExactly("job-ready");
        got.getFirst().complete();
    }

    /**
     * A backlog queued before a node started reaches it with no kick (they went out before it
     * listened): a fetch that came back with all it asked for leaves the consumer asked at every
     * scan, so the node takes the backlog pull after pull, not one pull's worth per full scan.
     */
    @Test
    void aBacklogQueuedBeforeTheNodeStartedIsPulledAtEveryScan() throws Exception {
        NatsJobQueue a = queue("a");
        for (int i = 0; i < 30; i++) {
            a.enqueue(ticket("backlog-" + i, 5));
        }
        NatsJobQueue b = queue("b");
        List<JobLease> taken = new ArrayList<>();
        long firstScan = System.nanoTime(); // the first scan asks every consumer; the next full one is a period later
        for (int pull = 0; pull < 3; pull++) {
            boolean beforeNextFullScan = System.nanoTime() - firstScan < ConsumerKicks.FULL_SCAN_NANOS;
            List<JobLease> got = b.pull(10, Duration.ZERO);
            taken.addAll(got);
            if (beforeNextFullScan) { // else a full scan asked anyway, and this pull proves nothing
                assertThat(got).as("pull %d of a backlog of 30, 10 at a time, with no kick since the node started", pull).hasSize(10);
            }
        }
        assertThat(b.pull(10, Duration.ZERO)).as("the backlog is all taken").isEmpty();
        assertThat(b.namedConsumers()).as("ready-p5 found empty").isZero();
        taken.forEach(JobLease::complete);
    }

    @Test
    void aWithdrawnTicketLeavesTheQueueAtOnce() throws Exception {
        NatsJobQueue q = queue("a");
        JobTicket delayed = JobTicket.first("job-delayed", 5, Instant.now().plusSeconds(3600));
        q.enqueue(delayed);
        q.enqueue(ticket("job-ready", 2));
        q.withdraw(delayed);
        q.withdraw(ticket("job-ready", 2));
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> messages(q) == 0)).as("both purged").isTrue();
        assertThat(q.pull(5, Duration.ofMillis(300))).isEmpty();
    }


    @Test
    void aFullQueueRefusesNewTicketsInsteadOfGrowing() {
        ClusterProperties small = new ClusterProperties(new ClusterProperties.Nats(nats.url()), "a", ACK_WAIT, 3, 1,
                Duration.ofSeconds(10), Duration.ofMillis(300), Duration.ofMillis(500), DataSize.ofMegabytes(1), DataSize.ofMegabytes(64), true);
        NatsJobQueue q = queue(small, new SimpleMeterRegistry());
        assertThatThrownBy(() -> {
            for (int i = 0; i < 100_000; i++) {
                q.enqueue(ticket("job-" + i, 5));
            }
        }).isInstanceOf(BackendFullException.class).hasMessageContaining("max-queue-bytes");
    }

    @Test
    void whileNatsIsDownEnqueueFailsFastAndPullReturnsNothingThenBothWorkAgain() throws Exception {
        assumeTrue(nats.restartKeepsUrl(), "needs a server that comes back on the same address");
        NatsJobQueue q = queue("a");
        q.enqueue(ticket("job-before", 5));
        nats.kill();
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> !nodesUp(q))).isTrue();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> q.enqueue(ticket("job-during", 5))).isInstanceOf(BackendUnavailableException.class);
        assertThat(q.pull(1, Duration.ofMillis(300))).isEmpty();
        assertThat((System.nanoTime() - t0) / 1_000_000).as("fails fast, no hang").isLessThan(3000);
        nats.restart();
        assertThat(Await.holdsWithin(Duration.ofSeconds(20), () -> nodesUp(q))).as("reconnected by itself").isTrue();
        q.enqueue(ticket("job-after", 5));
        Set<String> got = ConcurrentHashMap.newKeySet();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (got.size() < 2 && System.nanoTime() < deadline) {
            List<JobLease> l = q.pull(5, Duration.ofMillis(300));
            got.addAll(ids(l));
            completeAll(l);
        }
        assertThat(got).as("the ticket acknowledged before the crash survived it").containsExactlyInAnyOrder("job-before", "job-after");
    }

    static boolean nodesUp(NatsJobQueue q) {
        return q.isAvailable();
    }

    @Test
    void aKilledServerRestartsWithEveryTicketItAcknowledged() throws Exception {
        ClusterConnection conn = nodes.connect("probe");
        NatsJobQueue q = queue("a");
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String id = "job-" + i;
            q.enqueue(i % 4 == 0 ? JobTicket.first(id, i % 10, Instant.now().plusSeconds(3)) : ticket(id, i % 10));
            sent.add(id);
        }
        // The crash lands while the delay pump holds every delayed ticket (handed out, nak'ed
        // with the time left): the restarted server must hand them out again, and soon.
        Await.until("the pump holding the 50 delayed tickets", Duration.ofSeconds(10), () -> {
            try {
                return conn.management().getConsumerInfo(ClusterLayout.JOBS_STREAM, ClusterLayout.DELAYED_CONSUMER)
                        .getNumAckPending() == 50;
            } catch (Exception e) {
                return false;
            }
        });
        nodes.close();
        nats.kill(); // SIGKILL: no flush, no clean shutdown
        nats.restart();
        NatsJobQueue after = queue("b");
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (got.size() < sent.size() && System.nanoTime() < deadline) {
            List<JobLease> l = after.pull(50, Duration.ofMillis(300));
            got.addAll(ids(l));
            completeAll(l);
        }
        Collections.sort(got);
        List<String> want = new ArrayList<>(sent);
        Collections.sort(want);
        assertThat(got).containsExactlyElementsOf(want);
    }
}
