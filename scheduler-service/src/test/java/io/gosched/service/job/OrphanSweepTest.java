package io.gosched.service.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A record left {@code running} with no ticket left to bring it back: a restarted NATS server
 * forgot the ticket's delivery, a node dropped its first delivery as a duplicate of the run, and
 * then the runner died (or restarted under the same id). Without the orphan sweep nothing ever
 * moves such a job again. Each test puts such a record straight into the store, with no ticket in
 * the queue, next to one engine "n1" (the leader) whose queue's lease time is 1 s.
 */
class OrphanSweepTest extends JobServiceFixture {

    /** A cluster's store, as the engine sees one (shared), held in memory. */
    private final JobStore store = new ForwardingJobStore(InMemoryJobStore.unbounded(Clock.systemUTC())) {};

    private void start() {
        start(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(1), 5));
    }

    private void start(JobQueue queue) {
        clusterNode(queue, store, leader("n1", n -> n.equals("n1") || n.equals("n-alive")));
    }

    /** A record running on {@code runner} as its first attempt, under ticket 1, which is in no queue. */
    private String runningOn(JobStore s, String runner) {
        String id = UUID.randomUUID().toString();
        Instant now = Instant.now();
        JobRecord.Spec spec = new JobRecord.Spec(JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}"),
                null, null, 5, 1, 30_000, 1, now, null, null, null);
        assertThat(s.create(new JobRecord(id, spec, JobRecord.Status.queued(now).claimed(runner, now)))).isPresent();
        return id;
    }

    @Test
    void aJobLeftRunningByANodeThatLeftRunsAgain() throws Exception {
        String id = runningOn(store, "n-gone");
        start();
        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(30), x -> x.state() == JobState.SUCCEEDED);
        assertThat(v.node()).isEqualTo("n1");
        assertThat(v.attempt()).as("the lost attempt counts, as a takeover's does").isEqualTo(2);
        assertThat(meters.get("gosched.jobs.requeued").tag("cause", "orphan").counter().count()).isEqualTo(1.0);
    }

    @Test
    void aJobLeftRunningUnderThisNodesOwnIdRunsAgain() throws Exception {
        String id = runningOn(store, "n1"); // a node that restarted under the same id holds nothing
        start();
        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(30), x -> x.state() == JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(2);
    }

    @Test
    void aJobRunningOnAPresentNodeIsLeftAlone() throws Exception {
        String gone = runningOn(store, "n-gone");
        String alive = runningOn(store, "n-alive");
        start();
        JobAwait.view(jobs, gone, "succeeded", Duration.ofSeconds(30), x -> x.state() == JobState.SUCCEEDED);
        // the orphan went through the same sweeps: the live node's job was seen by each of them
        assertThat(jobs.get(alive).state()).isEqualTo(JobState.RUNNING);
        assertThat(jobs.get(alive).node()).isEqualTo("n-alive");
    }

    @Test
    void aJobWhoseTicketIsStillOutIsLeftToItsLease() throws Exception {
        // the queue's leases last a minute, but it tells the engine they last a second: the sweep
        // finds the record orphaned long enough while the dead runner's lease is still out
        JobQueue longLeases = new ForwardingJobQueue(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(60), 5)) {
            @Override
            public Duration leaseTime() {
                return Duration.ofSeconds(1);
            }
        };
        String gone = runningOn(store, "n-gone");
        String leased = runningOn(store, "n-gone");
        longLeases.enqueue(JobTicket.first(leased, 5, null));
        assertThat(longLeases.pull(1, Duration.ZERO)).as("n-gone's lease, never renewed nor ended").hasSize(1);
        start(longLeases);
        JobAwait.view(jobs, gone, "succeeded", Duration.ofSeconds(30), x -> x.state() == JobState.SUCCEEDED);
        // a ticket still out comes back by itself, to a takeover or to the dead letter: not the sweep's
        assertThat(jobs.get(leased).state()).isEqualTo(JobState.RUNNING);
        assertThat(jobs.get(leased).node()).isEqualTo("n-gone");
        assertThat(meters.get("gosched.jobs.requeued").tag("cause", "orphan").counter().count()).as("the orphan only").isEqualTo(1.0);
    }
}
