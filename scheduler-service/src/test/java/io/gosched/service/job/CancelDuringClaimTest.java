package io.gosched.service.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.Versioned;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A DELETE can reach a job after the claim's compare-and-set put it in state running and before
 * the node that claimed it has noted which attempt it runs. Seen from the API the job is
 * running, so the cancel is recorded in the store and handed to the node at once; the node must
 * not take it for a change to a job it has not claimed yet, or the job runs to its end (here a
 * 60 s sleep) with its cancel acknowledged. Found as a CI failure of
 * {@code JobServiceTest.aJobsTimesAndDurationAreTheServiceClocks}; this test holds the claim in
 * that window on purpose.
 */
class CancelDuringClaimTest extends JobServiceFixture {

    @Test
    void aCancelBetweenTheClaimsWriteAndTheAttemptsStartStopsTheJob() throws Exception {
        PausedClaim store = new PausedClaim(InMemoryJobStore.unbounded(Clock.systemUTC()));
        soleNode(store);
        String id = jobs.submit(JsonMapper.builder().build().readTree(
                "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":60000}]}}"), null).job().id();

        assertThat(store.claimWritten.await(20, TimeUnit.SECONDS)).as("the claim reached the store").isTrue();
        assertThat(jobs.get(id).state()).as("the API sees the job running").isEqualTo(JobState.RUNNING);
        jobs.cancel(id);
        store.release.countDown();

        JobView v = JobAwait.state(jobs, id, JobState.CANCELLED, Duration.ofSeconds(20));
        assertThat(v.attempt()).isEqualTo(1);
    }

    /** Holds the thread that wrote a claim (a first attempt, running) until the test releases it. */
    static final class PausedClaim extends ForwardingJobStore {
        final CountDownLatch claimWritten = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        PausedClaim(JobStore d) {
            super(d);
        }

        @Override
        public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
            Optional<Versioned<JobRecord>> w = d.replace(next, expectedRevision);
            JobRecord.Status s = next.status();
            if (w.isPresent() && s.state() == JobState.RUNNING && s.attempt() == 1 && !s.cancelRequested()
                    && claimWritten.getCount() > 0) {
                claimWritten.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return w;
        }
    }
}
