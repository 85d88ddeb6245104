package io.gosched.service.job;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.testing.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * POST /retry publishes the job's next ticket before its compare-and-set moves the record to it:
 * a dispatcher that pulls the ticket in between must wait for the move, not drop the only ticket
 * the job will ever have (it would stay queued for ever). The embedded queue wakes the dispatcher
 * at once, so every retry here races it.
 */
class ManualRetryTest extends JobServiceFixture {

    JobView await(String id, JobState state, int attempt) {
        return JobAwait.view(jobs, id, "in state " + state + " in attempt " + attempt, Duration.ofSeconds(10),
                v -> v.state() == state && v.attempt() == attempt);
    }

    @Test
    void everyManualRetryRunsTheJobAgain() {
        ServiceProperties p = TestProperties.service(Map.of());
        ServiceMetrics metrics = new ServiceMetrics(new SimpleMeterRegistry());
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        jobs = EmbeddedJobs.start(runtime, TestChannels.soleNode(p, metrics, budget), p, metrics, Clock.systemUTC(), budget).jobs();
        // fails at once: closing a closed channel
        String id = jobs.submit(JsonMapper.builder().build().readTree("{\"workload\":{\"channels\":[{\"name\":\"c\"}],\"steps\":"
                + "[{\"op\":\"close\",\"channel\":\"c\"},{\"op\":\"close\",\"channel\":\"c\"}]}}"), null).job().id();
        await(id, JobState.FAILED, 1);
        for (int i = 2; i <= 60; i++) {
            jobs.retry(id);
            JobView v = await(id, JobState.FAILED, i);
            assertThat(v.error().pointer()).isEqualTo("/workload/steps/1");
        }
    }
}
