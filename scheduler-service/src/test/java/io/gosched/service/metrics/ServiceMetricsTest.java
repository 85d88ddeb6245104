package io.gosched.service.metrics;

import io.gosched.service.metrics.ServiceMetrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServiceMetricsTest {

    /**
     * A cluster node that has not finished a job yet still exposes its finish counters, at 0:
     * the dashboard's per-node rates show it at 0 instead of leaving it out.
     */
    @Test
    void everyFinalStatesCounterExistsAtZeroBeforeAnyJobFinishes() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ServiceMetrics metrics = new ServiceMetrics(registry);
        List<String> finalStates = List.of("succeeded", "failed", "cancelled", "timed_out");
        for (String state : finalStates) {
            assertThat(registry.get("gosched.jobs.finished").tag("state", state).counter().count()).as(state).isZero();
        }
        assertThat(registry.find("gosched.jobs.finished").counters()).hasSize(finalStates.size());

        metrics.jobFinished("failed", Duration.ofMillis(3));
        assertThat(registry.get("gosched.jobs.finished").tag("state", "failed").counter().count()).isEqualTo(1.0);
        assertThat(registry.find("gosched.jobs.finished").counters()).as("the same counters, not new ones").hasSize(finalStates.size());
    }
}
