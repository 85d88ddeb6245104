package io.gosched.service.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.job.JobService;
import io.gosched.service.job.JobSpecs;
import io.gosched.service.job.JobView;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.memory.SoleNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.schedule.memory.InMemoryScheduleStore;
import io.gosched.service.testing.ManualClock;
import io.gosched.service.testing.TestChannels;
import io.gosched.service.testing.TestProperties;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The embedded job service on a two-P runtime, with schedules over it whose ticks are read from a
 * {@link ManualClock}: a test moves the clock and calls {@link ScheduleFiring#fireDue} itself (no
 * firing thread, no wall clock). Jobs run for real; their own times are the system clock's.
 */
final class ScheduleTestbed implements AutoCloseable {

    static final JsonMapper JSON = JsonMapper.builder().build();
    /** 2026-03-01T00:00:00Z, a whole second. */
    static final Instant T0 = Instant.parse("2026-03-01T00:00:00Z");

    final GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    final ManualClock clock;
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final InMemoryJobStore jobStore;
    final JobQueue queue;
    final JobService jobs;
    final InMemoryScheduleStore store = new InMemoryScheduleStore();
    final ScheduleMetrics metrics = new ScheduleMetrics(meters);
    final ScheduleService schedules;

    ScheduleTestbed(Instant start) {
        this(start, null);
    }

    /** @param queueWrapper  wraps the in-memory queue (a test's queue that bends answers), or null */
    ScheduleTestbed(Instant start, java.util.function.UnaryOperator<JobQueue> queueWrapper) {
        clock = new ManualClock(start);
        ServiceProperties p = TestProperties.service(Map.of());
        ServiceMetrics m = new ServiceMetrics(meters);
        ServiceBudget budget = ServiceBudget.of(p, m);
        JobSpecs specs = new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates());
        jobStore = new InMemoryJobStore(Clock.systemUTC(), budget.memory(), specs::requestBytes, 10_000, Duration.ofHours(1), (r, n) -> {});
        JobQueue q = new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5);
        queue = queueWrapper == null ? q : queueWrapper.apply(q);
        jobs = new JobService(runtime, TestChannels.soleNode(p, m, budget), p, m, specs, Clock.systemUTC(), budget, queue, jobStore,
                new SoleNode(), new ServiceShutdown());
        schedules = new ScheduleService(store, jobs, metrics, clock);
    }

    /** A firing of this node's, on the test's clock (another "node" is another firing over the same stores). */
    ScheduleFiring firing() {
        return new ScheduleFiring(store, jobs, metrics, clock);
    }

    static JsonNode json(String s) {
        return JSON.readTree(s);
    }

    /** Every job schedule {@code name} made so far, oldest tick first. */
    List<JobView> jobsOf(String name) {
        return jobs.list(new JobService.Filter(null, null, null, null, null), 0, 500).items().stream()
                .filter(v -> name.equals(v.schedule())).sorted(java.util.Comparator.comparing(JobView::scheduledFor)).toList();
    }

    double count(String meter, String schedule) {
        var c = meters.find(meter).tag("schedule", schedule).counter();
        return c == null ? 0 : c.count();
    }

    @Override
    public void close() throws Exception {
        jobs.cancelAll(Duration.ofSeconds(5));
        runtime.shutdown(Duration.ofSeconds(5));
    }
}
