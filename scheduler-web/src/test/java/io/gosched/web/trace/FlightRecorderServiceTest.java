package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.testing.Await;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.Retained;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The flight recorder's service without a server: its triggers, its p99, its settings. */
class FlightRecorderServiceTest {

    static FlightProperties props(boolean enabled, Duration bound, Duration minInterval) {
        return new FlightProperties(enabled, Duration.ofSeconds(2), 65_536, 2, minInterval, true, bound, Duration.ofMillis(100));
    }

    static MemoryBudget budget(long bytes) {
        return new MemoryBudget(bytes, Duration.ofSeconds(1), new ServiceMetrics(null));
    }

    @Test
    void p99IsTheBucketOfThe99thPercentileOfTheInterval() {
        double[] bounds = {0.001, 0.01, 0.1, Double.POSITIVE_INFINITY};
        assertThat(FlightRecorderService.p99Seconds(bounds, new long[4], new long[4])).isZero();
        assertThat(FlightRecorderService.p99Seconds(bounds, new long[4], new long[] {99, 1, 0, 0})).isEqualTo(0.001);
        assertThat(FlightRecorderService.p99Seconds(bounds, new long[4], new long[] {98, 2, 0, 0})).isEqualTo(0.01);
        // only what happened since the last reading counts
        assertThat(FlightRecorderService.p99Seconds(bounds, new long[] {0, 0, 50, 0}, new long[] {100, 0, 50, 0})).isEqualTo(0.001);
        assertThat(FlightRecorderService.p99Seconds(bounds, new long[4], new long[] {0, 0, 0, 3})).isInfinite();
    }

    @Test
    void aLatencyAboveTheBoundKeepsOneSnapshotPerMinInterval() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            FlightRecorderService s = new FlightRecorderService(props(true, Duration.ofNanos(1), Duration.ofHours(1)), rt, new ServiceMetrics(null), budget(1L << 40));
            try {
                for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); s.kept().isEmpty() && System.nanoTime() < deadline; ) {
                    churn(rt);
                }
                assertThat(s.kept()).singleElement().satisfies(k -> {
                    assertThat(k.reason()).isEqualTo(FlightRecorderService.SCHED_LATENCY);
                    assertThat(k.detail()).contains("exceeds PT0.000000001S");
                });
                // more checks, all above the bound, within min-interval
                for (long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500); System.nanoTime() < until; ) {
                    churn(rt);
                }
                assertThat(s.kept()).hasSize(1);
                assertThat(s.suppressed()).isPositive();
            } finally {
                s.destroy();
            }
        }
    }

    /** Goroutines from outside: each one's runnable-to-running latency is sampled. */
    private static void churn(GoRuntime rt) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(100);
        for (int i = 0; i < 100; i++) {
            rt.go(done::countDown);
        }
        done.await();
        Thread.sleep(20);
    }

    @Test
    void aFailedJobTriggersAndOtherOutcomesDoNot() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            ServiceMetrics metrics = new ServiceMetrics(null);
            MemoryBudget budget = budget(1L << 40);
            FlightRecorderService s = new FlightRecorderService(props(true, null, Duration.ZERO), rt, metrics, budget);
            try {
                metrics.jobFinished("succeeded", Duration.ZERO);
                metrics.jobFinished("cancelled", Duration.ZERO);
                Thread.sleep(200);
                assertThat(s.kept()).isEmpty();
                metrics.jobFinished("failed", Duration.ZERO);
                Await.value("the snapshot", Duration.ofSeconds(30), () -> s.kept().isEmpty() ? null : s.kept());
                assertThat(s.kept().getFirst().reason()).isEqualTo(FlightRecorderService.JOB_FAILED);
                churn(rt); // events in the window, so the snapshots below hold some
                for (int i = 0; i < 5; i++) {
                    metrics.jobFinished("failed", Duration.ZERO);
                }
                Await.until("keep=2", Duration.ofSeconds(30), () -> s.kept().size() == 2 && s.kept().getFirst().id() == 6);
                // The two kept are charged to the budget, the four evicted given back.
                assertThat(budget.held(Retained.FLIGHT_SNAPSHOTS)).isPositive()
                        .isEqualTo(s.kept().stream().mapToLong(k -> FlightRecorderService.bytes(k.snapshot())).sum());
            } finally {
                s.destroy();
            }
            assertThat(budget.held(Retained.FLIGHT_SNAPSHOTS)).as("given back at shutdown").isZero();
            assertThat(budget.used()).isZero();
        }
    }

    @Test
    void aSnapshotTheBudgetHasNoRoomForIsNotKept() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            ServiceMetrics metrics = new ServiceMetrics(null);
            MemoryBudget budget = budget(1_000);
            FlightRecorderService s = new FlightRecorderService(props(true, null, Duration.ZERO), rt, metrics, budget);
            try {
                churn(rt); // events in the window: the snapshot needs more than the 1,000 bytes
                metrics.jobFinished("failed", Duration.ZERO);
                Await.until("the refusal", Duration.ofSeconds(30), () -> s.refusedByBudget() == 1);
                assertThat(s.kept()).isEmpty();
                assertThat(budget.used()).isZero();
            } finally {
                s.destroy();
            }
        }
    }

    @Test
    void offMeansNoRecorderAnd404() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            FlightRecorderService s = new FlightRecorderService(props(false, null, Duration.ZERO), rt, new ServiceMetrics(null), budget(1L << 40));
            assertThat(s.snapshot()).isEmpty();
            WebTestClient c = WebTestClient.bindToController(new FlightController(s))
                    .controllerAdvice(new io.gosched.api.error.ApiExceptionHandler()).build();
            for (String path : new String[] {"/api/v1/trace/flight", "/api/v1/trace/flight/snapshots", "/api/v1/trace/flight/snapshots/1"}) {
                c.get().uri(path).exchange().expectStatus().isNotFound().expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                        .expectBody().jsonPath("$.type").isEqualTo(FlightController.OFF.toString());
            }
            s.destroy();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(FlightProperties.class)
    static class Props {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
            .withUserConfiguration(Props.class);

    @Test
    void settingsBindWithDefaultsAndBadOnesStopTheStart() {
        runner.run(ctx -> {
            FlightProperties p = ctx.getBean(FlightProperties.class);
            assertThat(p.enabled()).isTrue();
            assertThat(p.window()).hasSeconds(10);
            assertThat(p.latencyP99Bound()).isNull();
        });
        runner.withPropertyValues("gosched.trace.flight.window=0s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("window"));
        runner.withPropertyValues("gosched.trace.flight.window=11m")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("window"));
        runner.withPropertyValues("gosched.trace.flight.latency-p99-bound=0ms")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("latency-p99-bound"));
        runner.withPropertyValues("gosched.trace.flight.latency-check-interval=1ms")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("latency-check-interval"));
        runner.withPropertyValues("gosched.trace.flight.keep=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("keep"));
        runner.withPropertyValues("gosched.trace.flight.min-interval=-1s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("min-interval"));
    }
}
