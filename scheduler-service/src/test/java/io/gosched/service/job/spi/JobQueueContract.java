package io.gosched.service.job.spi;

import io.gosched.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link JobQueue} promises the job engine, whatever holds the tickets: one ticket per
 * job id and number, priority 9 first and FIFO within a level, never before {@code notBefore},
 * pulls of only as many as asked, withdrawal, depth, redelivery of a released or lapsed lease with
 * the next delivery number, the lost handler after max-deliver, and each ticket to one puller at a
 * time among many threads. Implemented by the in-memory queue's test here and by the NATS one's in
 * scheduler-cluster; an implementation's own promises (limits, outages) are tested beside it.
 *
 * <p>"Nodes" are what {@link #queue} returns for different names: views of one queue.
 */
public interface JobQueueContract {

    /** The queue as node {@code node} sees it; every node of one test shares its tickets. */
    JobQueue queue(String node);

    /** The ack wait the queues were made with: how long an abandoned lease takes to lapse (a second or two). */
    Duration ackWait();

    /** The max-deliver the queues were made with (at least 2). */
    int maxDeliver();

    static JobTicket ticket(String id, int priority) {
        return JobTicket.first(id, priority, null);
    }

    static List<String> ids(List<JobLease> leases) {
        return leases.stream().map(l -> l.ticket().jobId()).toList();
    }


    /** Pulls until one lease comes or {@code within} passed. */
    static List<JobLease> pullOne(JobQueue q, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        List<JobLease> got = List.of();
        while (got.isEmpty() && System.nanoTime() - end < 0) {
            got = q.pull(1, Duration.ofMillis(200));
        }
        return got;
    }

    @Test
    default void theSameTicketEnqueuedTwiceIsHandedOutOnce() throws Exception {
        JobQueue q = queue("a");
        q.enqueue(ticket("job-1", 5));
        q.enqueue(ticket("job-1", 5)); // a retried submission: same job, same ticket
        q.enqueue(ticket("job-2", 5));
        List<JobLease> got = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (got.size() < 2 && System.nanoTime() - end < 0) {
            got.addAll(q.pull(10, Duration.ofMillis(500)));
        }
        assertThat(ids(got)).containsExactly("job-1", "job-2");
        got.forEach(JobLease::complete);
        assertThat(q.pull(10, Duration.ofMillis(300))).as("nothing left").isEmpty();
    }

    @Test
    default void ticketsComeHighestPriorityFirstAndFifoWithinALevel() throws Exception {
        JobQueue q = queue("a");
        Random rnd = new Random(12);
        List<JobTicket> sent = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            JobTicket t = ticket(String.format("job-%02d", i), rnd.nextInt(10));
            sent.add(t);
            q.enqueue(t);
        }
        List<JobTicket> expected = new ArrayList<>(sent);
        expected.sort((x, y) -> Integer.compare(y.priority(), x.priority())); // stable: FIFO within a level
        List<JobTicket> pulled = new ArrayList<>();
        List<String> pulls = new ArrayList<>(); // each pull's ids and how long it took, for a failure's message
        while (pulled.size() < sent.size()) {
            long t0 = System.nanoTime();
            List<JobLease> got = q.pull(7, Duration.ofSeconds(2));
            assertThat(got).as("a pull after %d of %d", pulled.size(), sent.size()).isNotEmpty().hasSizeLessThanOrEqualTo(7);
            pulls.add(ids(got) + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            got.forEach(l -> pulled.add(l.ticket()));
            got.forEach(JobLease::complete);
        }
        assertThat(pulled).as("pulls: %s", pulls).containsExactlyElementsOf(expected);
    }

    @Test
    default void aPullTakesOnlyAsManyAsAskedAndLeavesTheRestToOthers() throws Exception {
        JobQueue a = queue("a");
        JobQueue b = queue("b");
        for (int i = 0; i < 10; i++) {
            a.enqueue(ticket("job-" + i, 3));
        }
        List<JobLease> first = new ArrayList<>();
        while (first.isEmpty()) {
            first.addAll(a.pull(3, Duration.ofSeconds(1)));
        }
        assertThat(first).hasSizeLessThanOrEqualTo(3);
        long t0 = System.nanoTime();
        assertThat(a.pull(0, Duration.ofSeconds(5))).as("no room, no pull").isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("and at once").isLessThan(Duration.ofSeconds(2));
        List<JobLease> rest = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (rest.size() < 10 - first.size() && System.nanoTime() - end < 0) {
            rest.addAll(b.pull(10, Duration.ofMillis(500)));
        }
        assertThat(ids(rest)).doesNotContainAnyElementsOf(ids(first)).hasSize(10 - first.size());
        first.forEach(JobLease::complete);
        rest.forEach(JobLease::complete);
    }

    @Test
    default void aWaitingPullIsWokenByANewTicket() throws Exception {
        JobQueue a = queue("a");
        JobQueue b = queue("b");
        Thread submitter = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(300);
                a.enqueue(ticket("job-late", 5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long t0 = System.nanoTime();
        List<JobLease> got = b.pull(1, Duration.ofSeconds(20));
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        submitter.join();
        assertThat(ids(got)).containsExactly("job-late");
        assertThat(waitedMs).as("woken long before the 20 s wait ended").isLessThan(10_000);
        got.forEach(JobLease::complete);
    }

    @Test
    default void aTicketIsNeverHandedOutBeforeItsNotBeforeAndItsDelayIsNoDelivery() throws Exception {
        JobQueue q = queue("a");
        Instant notBefore = Instant.now().plusMillis(1200);
        q.enqueue(JobTicket.first("job-later", 9, notBefore));
        q.enqueue(ticket("job-now", 1));
        List<JobLease> first = pullOne(q, Duration.ofSeconds(5));
        assertThat(ids(first)).as("the lower priority runs first: the higher one may not yet").containsExactly("job-now");
        first.forEach(JobLease::complete);
        List<JobLease> later = List.of();
        Instant handedOut = null;
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (later.isEmpty() && System.nanoTime() - end < 0) {
            later = q.pull(10, Duration.ofMillis(200));
            handedOut = Instant.now();
        }
        assertThat(ids(later)).containsExactly("job-later");
        assertThat(handedOut).as("handed out at or after notBefore").isAfterOrEqualTo(notBefore);
        assertThat(later.getFirst().delivery()).isEqualTo(1);
        later.forEach(JobLease::complete);
    }

    @Test
    default void depthCountsWaitingAndDelayedTicketsButNotLeasedOnes() throws Exception {
        JobQueue q = queue("a");
        q.enqueue(ticket("job-1", 5));
        q.enqueue(ticket("job-2", 5));
        q.enqueue(JobTicket.first("job-3", 5, Instant.now().plusSeconds(3600)));
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> q.depth() == 3)).as("three waiting, one of them delayed").isTrue();
        List<JobLease> got = pullOne(q, Duration.ofSeconds(5));
        assertThat(got).hasSize(1);
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> q.depth() == 2)).as("a leased one does not wait").isTrue();
        got.forEach(JobLease::complete);
    }

    @Test
    default void aWithdrawnTicketIsNeverHandedOut() throws Exception {
        JobQueue q = queue("a");
        JobTicket delayed = JobTicket.first("job-delayed", 5, Instant.now().plusMillis(800));
        q.enqueue(delayed);
        q.enqueue(ticket("job-ready", 2));
        q.enqueue(ticket("job-kept", 1));
        q.withdraw(delayed);
        q.withdraw(ticket("job-ready", 2));
        List<String> got = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (System.nanoTime() - end < 0) { // past the delayed one's notBefore
            List<JobLease> l = q.pull(5, Duration.ofMillis(200));
            got.addAll(ids(l));
            l.forEach(JobLease::complete);
        }
        assertThat(got).containsExactly("job-kept");
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> q.depth() == 0)).isTrue();
    }

    /** What the engine's orphan sweep asks: whether a ticket of the job is still in the queue, in any of its places. */
    @Test
    default void theQueueSaysWhetherItHoldsATicketOfAJob() throws Exception {
        JobQueue q = queue("a");
        assertThat(q.leaseTime()).isEqualTo(ackWait());
        JobTicket later = JobTicket.first("job-later", 3, Instant.now().plusSeconds(60));
        q.enqueue(ticket("job-ready", 5));
        q.enqueue(later);
        q.enqueue(new JobTicket("job-pinned", 2, 4, null, "a"));
        assertThat(q.holdsTicketOf("job-ready")).as("waiting").isTrue();
        assertThat(q.holdsTicketOf("job-later")).as("delayed").isTrue();
        assertThat(q.holdsTicketOf("job-pinned")).as("pinned to a node, a later number").isTrue();
        assertThat(q.holdsTicketOf("job-none")).isFalse();
        List<JobLease> leased = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (leased.size() < 2 && System.nanoTime() - end < 0) {
            leased.addAll(q.pull(2 - leased.size(), Duration.ofMillis(200)));
        }
        assertThat(ids(leased)).containsExactlyInAnyOrder("job-ready", "job-pinned");
        assertThat(q.holdsTicketOf("job-ready")).as("leased, not completed").isTrue();
        assertThat(q.holdsTicketOf("job-pinned")).as("leased, not completed").isTrue();
        leased.forEach(JobLease::complete);
        q.withdraw(later);
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> !q.holdsTicketOf("job-ready") && !q.holdsTicketOf("job-pinned")
                && !q.holdsTicketOf("job-later"))).as("completed or withdrawn: none held").isTrue();
    }

    @Test
    default void aReleasedLeaseComesBackAfterItsDelayAsTheNextDelivery() throws Exception {
        JobQueue q = queue("a");
        q.enqueue(ticket("job-1", 5));
        JobLease first = pullOne(q, Duration.ofSeconds(5)).getFirst();
        assertThat(first.delivery()).isEqualTo(1);
        assertThat(first.isOpen()).isTrue();
        long t0 = System.nanoTime();
        first.release(Duration.ofMillis(500));
        assertThat(first.isOpen()).isFalse();
        JobLease again = pullOne(queue("b"), Duration.ofSeconds(10)).getFirst();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("not before the delay").isGreaterThanOrEqualTo(Duration.ofMillis(450));
        assertThat(again.ticket()).isEqualTo(first.ticket());
        assertThat(again.delivery()).isEqualTo(2);
        again.complete();
        assertThat(q.pull(5, Duration.ofMillis(500))).as("completed: gone for good").isEmpty();
    }

    @Test
    default void anAbandonedLeaseLapsesAfterTheAckWaitAndAnotherNodeGetsTheTicket() throws Exception {
        JobQueue a = queue("a");
        JobQueue b = queue("b");
        a.enqueue(ticket("job-1", 5));
        JobLease held = pullOne(a, Duration.ofSeconds(5)).getFirst();
        long t0 = System.nanoTime();
        held.abandon(); // the holder "dies": nothing is said to the queue
        assertThat(held.isOpen()).isFalse();
        List<JobLease> taken = pullOne(b, ackWait().multipliedBy(5).plusSeconds(5));
        long afterMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(ids(taken)).containsExactly("job-1");
        assertThat(taken.getFirst().delivery()).isEqualTo(2);
        assertThat(afterMs).as("not before the ack wait ran out").isGreaterThanOrEqualTo(ackWait().toMillis() - 100);
        taken.forEach(JobLease::complete);
    }

    @Test
    default void anOpenLeaseIsNotHandedOutAgain() throws Exception {
        JobQueue a = queue("a");
        JobQueue b = queue("b");
        a.enqueue(ticket("job-1", 5));
        JobLease held = pullOne(a, Duration.ofSeconds(5)).getFirst();
        long end = System.nanoTime() + ackWait().multipliedBy(2).toNanos();
        while (System.nanoTime() - end < 0) {
            assertThat(b.pull(1, Duration.ofMillis(250))).as("b must not get a ticket a holds").isEmpty();
        }
        held.complete();
        assertThat(b.pull(1, Duration.ofMillis(500))).isEmpty();
    }

    @Test
    default void aTicketWhoseLeasesLapseMaxDeliverTimesGoesToTheLostHandlerOnce() throws Exception {
        JobQueue a = queue("a");
        JobQueue b = queue("b");
        List<String> lost = new CopyOnWriteArrayList<>();
        a.onLost((t, deliveries) -> lost.add(t.jobId() + "/" + t.number() + "/" + deliveries));
        b.onLost((t, deliveries) -> lost.add(t.jobId() + "/" + t.number() + "/" + deliveries));
        a.enqueue(ticket("job-doomed", 5));
        for (int i = 0; i < maxDeliver(); i++) { // every delivery "dies"
            JobQueue q = i % 2 == 0 ? a : b;
            List<JobLease> got = pullOne(q, ackWait().multipliedBy(5).plusSeconds(5));
            assertThat(got).as("delivery %d", i + 1).hasSize(1);
            assertThat(got.getFirst().delivery()).isEqualTo(i + 1);
            got.getFirst().abandon();
        }
        // The last lapse is noticed when the queue next looks for a ticket to hand out: nodes pull all the time.
        long end = System.nanoTime() + ackWait().multipliedBy(5).plusSeconds(10).toNanos();
        while (lost.isEmpty() && System.nanoTime() - end < 0) {
            assertThat(a.pull(1, Duration.ofMillis(200))).as("no delivery beyond max-deliver").isEmpty();
        }
        Thread.sleep(300);
        assertThat(lost).containsExactly("job-doomed/1/" + maxDeliver());
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> a.depth() == 0)).as("the lost ticket left the queue").isTrue();
    }

    @Test
    default void aRetryIsANewTicketWithItsOwnDeliveryCount() throws Exception {
        JobQueue q = queue("a");
        JobTicket first = ticket("job-1", 5);
        q.enqueue(first);
        JobLease lease = pullOne(q, Duration.ofSeconds(5)).getFirst();
        Instant due = Instant.now().plusMillis(500);
        q.enqueue(first.next(due)); // ticket 2 first, then complete ticket 1: a crash in between loses nothing
        lease.complete();
        List<JobLease> got = pullOne(q, Duration.ofSeconds(10));
        assertThat(Instant.now()).isAfterOrEqualTo(due);
        assertThat(got.getFirst().ticket().number()).isEqualTo(2);
        assertThat(got.getFirst().delivery()).isEqualTo(1);
        got.forEach(JobLease::complete);
    }

    @Test
    default void manyPullersOnManyThreadsGetEveryTicketExactlyOnce() throws Exception {
        int n = 300;
        JobQueue producer = queue("p");
        for (int i = 0; i < n; i++) {
            producer.enqueue(ticket("job-" + i, i % 10));
        }
        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger twice = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < 6; w++) {
                JobQueue q = queue("w" + w);
                fs.add(pool.submit(() -> {
                    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                    while (done.get() < n && System.nanoTime() - end < 0) {
                        for (JobLease l : q.pull(1 + (int) (Math.random() * 8), Duration.ofMillis(200))) {
                            if (!seen.add(l.ticket().jobId())) {
                                twice.incrementAndGet();
                            }
                            l.complete();
                            done.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(twice.get()).as("tickets handed out twice").isZero();
        assertThat(seen).hasSize(n);
    }
}
