package io.gosched.service.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.testing.Await;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * NATS killed while a claim's CAS is in flight: the CAS lands, its answer is lost, and the node
 * hands the ticket back, so the record reads {@code running} on a node that does not run it. A
 * restarted server may have forgotten that it ever delivered the ticket and hands it out again as
 * a first delivery, which every node reads as a duplicate of a run in progress and drops
 * (ClusterJobsTest.natsRestartedUnderLoadAnswers503ThenRecoversLosingNothing once had such a job
 * still running 90 s after NATS came back). The node that claimed settles its unanswered claims
 * once the store answers: the job runs, as the attempt it would have been.
 */
class ClaimWithoutAnswerTest extends JobServiceFixture {

    @Test
    void aClaimThatLandedWithoutAnAnswerStillRuns() throws Exception {
        LostClaimAnswer store = new LostClaimAnswer(InMemoryJobStore.unbounded(Clock.systemUTC()));
        ForgetfulQueue queue = new ForgetfulQueue(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5));
        clusterNode(queue, store, leader("n1", n -> true));
        String id = jobs.submit(JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}"), null)
                .job().id();
        JobView v = JobAwait.view(jobs, id, "succeeded", Duration.ofSeconds(20), x -> x.state() == JobState.SUCCEEDED);
        assertThat(store.lostAnswers).as("the first claim landed without an answer").contains(id);
        // the unanswered claim hands its ticket back after a wait (Claims.UNANSWERED_FIRST_WAIT), so it may come back after the run
        Await.until("the first ticket came back, as a first delivery, beside the next one that ran", Duration.ofSeconds(20),
                () -> queue.deliveries.getOrDefault(id, 0) >= 3);
        assertThat(queue.deliveries.get(id)).as("the first ticket came back once and was dropped; the next ran").isEqualTo(3);
        v = jobs.get(id);
        assertThat(v.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(v.attempt()).as("the claim that never ran is not counted, and the ticket that came back did not run").isEqualTo(1);
        assertThat(meters.get("gosched.jobs.requeued").tag("cause", "unanswered-claim").counter().count()).isEqualTo(1.0);
    }

    /** Applies the first claim of each job (the CAS to running) and then fails as if its answer was lost. */
    static final class LostClaimAnswer extends ForwardingJobStore {
        final Set<String> lostAnswers = ConcurrentHashMap.newKeySet();

        LostClaimAnswer(JobStore d) {
            super(d);
        }

        @Override
        public Optional<Versioned<JobRecord>> replace(JobRecord next, long expectedRevision) {
            Optional<Versioned<JobRecord>> written = d.replace(next, expectedRevision);
            if (written.isPresent() && next.status().state() == JobState.RUNNING && lostAnswers.add(next.id())) {
                throw new BackendUnavailableException("the test's store", "no answer to the claim's CAS", Duration.ofSeconds(1), null);
            }
            return written;
        }
    }

    /** A queue whose server forgets every delivery, as one restarted after a kill may: each lease is a first delivery. */
    static final class ForgetfulQueue extends ForwardingJobQueue {
        final Map<String, Integer> deliveries = new ConcurrentHashMap<>();

        ForgetfulQueue(JobQueue d) {
            super(d);
        }

        @Override
        public List<JobLease> pull(int room, Duration maxWait) throws InterruptedException {
            return d.pull(room, maxWait).stream().map(this::firstDelivery).toList();
        }

        private JobLease firstDelivery(JobLease l) {
            deliveries.merge(l.ticket().jobId(), 1, Integer::sum);
            return new JobLease() {
                @Override
                public JobTicket ticket() {
                    return l.ticket();
                }

                @Override
                public int delivery() {
                    return 1;
                }

                @Override
                public void complete() {
                    l.complete();
                }

                @Override
                public void release(Duration delay) {
                    l.release(delay);
                }

                @Override
                public boolean isOpen() {
                    return l.isOpen();
                }

                @Override
                public void abandon() {
                    l.abandon();
                }
            };
        }
    }
}
