package io.gosched.service.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.Versioned;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * In a cluster a record read may come from a replica that has not yet applied the record's
 * creation (NATS KV reads are direct gets, answered by any replica; docs/cluster.md, "Reads from a
 * replica catching up"). A ticket is published only after its record was created, so a claim that
 * reads no record must give the store time instead of dropping the ticket: dropped, the job would
 * stay queued for ever with no ticket to run it.
 */
class StaleReadClaimTest extends JobServiceFixture {

    @Test
    void aClaimThatReadsNoRecordLeavesTheTicketForALaterRead() throws Exception {
        StaleFirstRead store = new StaleFirstRead(InMemoryJobStore.unbounded(Clock.systemUTC()));
        soleNode(store);
        String id = jobs.submit(JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}"), null)
                .job().id();
        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(20), x -> x.state() == JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(1);
        assertThat(store.staleReads).as("the claim met the stale read").contains(id);
    }

    /** Answers "no such record" to the first full read of each record, as a replica catching up would. */
    static final class StaleFirstRead extends ForwardingJobStore {
        final Set<String> staleReads = ConcurrentHashMap.newKeySet();

        StaleFirstRead(JobStore d) {
            super(d);
        }

        @Override
        public Optional<Versioned<JobRecord>> get(String id) {
            return staleReads.add(id) ? Optional.empty() : d.get(id);
        }
    }
}
