package io.gosched.web.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.SchedStats;
import io.gosched.web.telemetry.FakeStats;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SchedulerMetricsTest {

    private final AtomicReference<SchedStats> current = new AtomicReference<>(FakeStats.of(4, 100));
    private final AtomicInteger reads = new AtomicInteger();
    private PrometheusMeterRegistry registry;
    private SchedulerMetrics metrics;

    @BeforeEach
    void bind() {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        metrics = new SchedulerMetrics(FakeStats.source(() -> {
            reads.incrementAndGet();
            return current.get();
        }), Map.of("application", "gosched-test"));
        metrics.bindTo(registry);
    }

    @AfterEach
    void unbind() {
        metrics.destroy();
        registry.close();
    }

    @Test
    void exposesGoMirroringNamesWithBaseUnitsAndTotals() {
        String text = registry.scrape();
        assertThat(text).contains(
                "gosched_goroutines 30.0",
                "gosched_sched_gomaxprocs_threads 4.0",
                "gosched_sched_threads_total_threads 8.0",
                "gosched_sched_goroutines_runnable_goroutines 11.0",
                "gosched_sched_goroutines_waiting_goroutines 12.0",
                "gosched_sched_goroutines_not_in_go_goroutines 3.0",
                "gosched_sched_goroutines_running_goroutines 1.0",
                "gosched_sched_goroutines_created_goroutines_total 100.0",
                "gosched_goroutines_leaked_total 110.0",
                "gosched_schedules_total 101.0",
                "gosched_steals_total 102.0",
                "gosched_stolen_goroutines_total 103.0",
                "gosched_preemptions_total{kind=\"cooperative\"} 104.0",
                "gosched_preemptions_total{kind=\"handoff\"} 108.0",
                "gosched_handoffs_total 105.0",
                "gosched_syscall_handoffs_total 109.0",
                "gosched_timers_fired_total 106.0",
                "gosched_netpoll_ready_goroutines_total 107.0",
                "gosched_runqueue_global_goroutines 9.0",
                "gosched_threads{state=\"running\"} 4.0",
                "gosched_threads{state=\"spinning\"} 1.0",
                "gosched_threads{state=\"idle\"} 2.0",
                "gosched_threads{state=\"syscall\"} 1.0",
                "gosched_procs{state=\"running\"} 1.0",
                "gosched_procs{state=\"syscall\"} 1.0",
                "gosched_procs{state=\"idle\"} 2.0",
                "gosched_uptime_seconds 5.0",
                "# TYPE gosched_steals_total counter",
                "# TYPE gosched_goroutines gauge");
    }

    @Test
    void latencyIsARealHistogramWithCumulativeBuckets() {
        String text = registry.scrape();
        // core counts per bucket are 1,2,3,4,5 (not cumulative); Prometheus buckets accumulate
        assertThat(text).contains(
                "# TYPE gosched_sched_latencies_seconds histogram",
                "gosched_sched_latencies_seconds_bucket{application=\"gosched-test\",le=\"1.0E-6\"} 1",
                "gosched_sched_latencies_seconds_bucket{application=\"gosched-test\",le=\"1.0E-5\"} 3",
                "gosched_sched_latencies_seconds_bucket{application=\"gosched-test\",le=\"1.0E-4\"} 6",
                "gosched_sched_latencies_seconds_bucket{application=\"gosched-test\",le=\"0.001\"} 10",
                "gosched_sched_latencies_seconds_bucket{application=\"gosched-test\",le=\"+Inf\"} 15",
                "gosched_sched_latencies_seconds_count{application=\"gosched-test\"} 15",
                "gosched_sched_latencies_seconds_sum{application=\"gosched-test\"} 0.5");
        String openMetrics = registry.scrape("application/openmetrics-text; version=1.0.0; charset=utf-8");
        assertThat(openMetrics).contains("# TYPE gosched_sched_latencies_seconds histogram",
                "# UNIT gosched_sched_latencies_seconds seconds");
    }

    @Test
    void perProcMetersFollowProcresize() {
        assertThat(registry.scrape()).contains("gosched_runqueue_local_goroutines{p=\"3\"} 4.0",
                "gosched_p_schedticks_total{p=\"2\"} 102.0", "gosched_p_syscallticks_total{p=\"1\"} 11.0",
                "gosched_p_timers{p=\"3\"} 3.0");

        current.set(FakeStats.of(2, 100));
        metrics.reconcileProcMeters();
        String shrunk = registry.scrape();
        assertThat(shrunk).contains("gosched_runqueue_local_goroutines{p=\"1\"} 2.0")
                .doesNotContain("p=\"2\"", "p=\"3\"");

        current.set(FakeStats.of(6, 100));
        metrics.reconcileProcMeters();
        assertThat(registry.scrape()).contains("gosched_runqueue_local_goroutines{p=\"5\"} 6.0",
                "gosched_p_schedticks_total{p=\"4\"} 104.0");
    }

    @Test
    void bindingTwiceDoesNotRegisterTheHistogramTwice() {
        metrics.bindTo(registry); // a second binder pass (Boot may bind a registry more than once in tests)
        assertThat(registry.scrape().split("# TYPE gosched_sched_latencies_seconds histogram", -1)).hasSize(2);
    }
}
