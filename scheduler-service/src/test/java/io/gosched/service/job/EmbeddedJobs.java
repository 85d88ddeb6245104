package io.gosched.service.job;

import io.gosched.service.ServiceShutdown;

import java.time.Clock;
import java.time.Duration;

import io.gosched.runtime.GoRuntime;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.memory.SoleNode;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;

/**
 * The job service of an embedded node, on the in-memory ports as the service's auto-configuration
 * makes them ({@code InMemoryJobPorts}), with a test's clock for the records' times and ages.
 *
 * @param store  the in-memory store, for what only it can tell (its Idempotency-Keys)
 */
record EmbeddedJobs(JobService jobs, InMemoryJobStore store) {

    static EmbeddedJobs start(GoRuntime runtime, ChannelService channels, ServiceProperties p, ServiceMetrics metrics, Clock clock,
            ServiceBudget budget) {
        return start(runtime, channels, p, metrics, clock, budget, new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates()));
    }

    /** With the given parser of job bodies (HTTP-target jobs on, say). */
    static EmbeddedJobs start(GoRuntime runtime, ChannelService channels, ServiceProperties p, ServiceMetrics metrics, Clock clock,
            ServiceBudget budget, JobSpecs specs) {
        InMemoryJobStore store = new InMemoryJobStore(clock, budget.memory(), specs::requestBytes, p.retention().maxFinishedJobs(),
                p.retention().maxAge(), metrics::jobsEvicted);
        InMemoryJobQueue queue = new InMemoryJobQueue(clock, Duration.ofSeconds(30), 5);
        return new EmbeddedJobs(new JobService(runtime, channels, p, metrics, specs, clock, budget, queue, store, new SoleNode(),
                new ServiceShutdown()), store);
    }
}
