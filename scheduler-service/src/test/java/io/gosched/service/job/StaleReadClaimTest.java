package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * In a cluster a record read may come from a replica that has not yet applied the record's
 * creation (NATS KV reads are direct gets, answered by any replica; docs/cluster.md, "Reads from a
 * replica catching up"). A ticket is published only after its record was created, so a claim that
 * reads no record must give the store time instead of dropping the ticket: dropped, the job would
 * stay queued for ever with no ticket to run it.
 */
class StaleReadClaimTest extends JobServiceFixture {

    static final JsonNode YIELD = JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}");

    @Test
    void aClaimThatReadsNoRecordLeavesTheTicketForALaterRead() throws Exception {
        StaleFirstRead store = new StaleFirstRead(InMemoryJobStore.unbounded(Clock.systemUTC()));
        JobQueue queue = new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5);
        clusterNode(queue, store, leader("n1", n -> true));
        // made as another node makes it (this node keeps no copy of it): its claim reads it first
        String id = UUID.randomUUID().toString();
        Instant now = Instant.now();
        store.create(new JobRecord(id, new JobRecord.Spec(YIELD, null, null, 0, 1, 60_000, 1, now, null, null, null),
                JobRecord.Status.queued(now)));
        queue.enqueue(new JobTicket(id, 1, 0, null, null));

        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(20), x -> x.state() == JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(1);
        assertThat(store.staleReads).as("the claim met the stale read").contains(id);
    }

    /**
     * A job this node created is claimed from its copy, without a read; when its compare-and-set
     * finds the record moved on (another writer), the claim reads, and a read that finds nothing
     * then must not drop the ticket either.
     */
    @Test
    void aClaimFromTheCreatedCopyThatLosesItsRaceAndReadsNoRecordLeavesTheTicket() throws Exception {
        StaleFirstRead store = new StaleFirstRead(InMemoryJobStore.unbounded(Clock.systemUTC()));
        store.loseFirstWrite = true;
        soleNode(store);
        String id = jobs.submit(YIELD, null).job().id();

        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(20), x -> x.state() == JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(1);
        assertThat(store.lostWrites).as("the claim's compare-and-set lost its race").contains(id);
        assertThat(store.staleReads).as("the claim met the stale read after it").contains(id);
    }

    /** A job made here is claimed without reading it back: one round trip fewer per job over a shared store. */
    @Test
    void aJobCreatedHereIsClaimedWithoutARead() throws Exception {
        StaleFirstRead store = new StaleFirstRead(InMemoryJobStore.unbounded(Clock.systemUTC()));
        soleNode(store);
        String id = jobs.submit(YIELD, null).job().id();
        JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(20), x -> x.state() == JobState.SUCCEEDED);
        assertThat(store.staleReads).as("records read in full (the claim read none)").doesNotContain(id);
    }

    /**
     * Answers "no such record" to the first full read of each record, as a replica catching up
     * would; with {@code loseFirstWrite}, the first compare-and-set of each record fails, as when
     * another writer got in first (here nobody did, so the record is as it was).
     */
    static final class StaleFirstRead extends ForwardingJobStore {
        final Set<String> staleReads = ConcurrentHashMap.newKeySet();
        final Set<String> lostWrites = ConcurrentHashMap.newKeySet();
        volatile boolean loseFirstWrite;

        StaleFirstRead(JobStore d) {
            super(d);
        }

        @Override
        public Optional<Versioned<JobRecord>> get(String id) {
            return staleReads.add(id) ? Optional.empty() : d.get(id);
        }

        @Override
        public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
            if (loseFirstWrite && lostWrites.add(next.id())) {
                return Optional.empty();
            }
            return d.replace(next, expectedRevision);
        }
    }
}
