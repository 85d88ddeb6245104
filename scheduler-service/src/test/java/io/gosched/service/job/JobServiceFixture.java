package io.gosched.service.job;

import io.gosched.service.ServiceShutdown;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.job.JobService;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.testing.TestProperties;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;

/**
 * What the job service's own tests share: a two-P runtime for the service, and the service they
 * build on it (each its own way), both stopped after every test so that no job or goroutine
 * outlives it.
 */
abstract class JobServiceFixture {

    final GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    JobService jobs;
    /** The meters of the service {@link #clusterNode} built. */
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    /**
     * The service as one node of a cluster sees it (the engine's cluster mode: no embedded
     * shortcuts), on the given queue and store, with default properties; sets {@link #jobs}.
     */
    JobService clusterNode(JobQueue queue, JobStore store, JobNode node) {
        ServiceProperties p = TestProperties.service(Map.of());
        ServiceMetrics metrics = new ServiceMetrics(meters);
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        jobs = new JobService(runtime, TestChannels.soleNode(p, metrics, budget), p, metrics,
                new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates()), Clock.systemUTC(), budget, queue, store, node, new ServiceShutdown());
        return jobs;
    }

    /**
     * The embedded service with HTTP-target jobs allowed where {@code hp} says and the
     * application's {@code handlers}; sets {@link #jobs}. Returns the HTTP caller, which the test
     * closes.
     */
    io.gosched.service.http.HttpCaller embeddedWithHttpTargets(io.gosched.service.http.HttpJobProperties hp,
            io.gosched.service.handler.JobHandlers handlers) {
        io.gosched.service.http.HttpTargets targets = new io.gosched.service.http.HttpTargets(hp);
        io.gosched.service.http.HttpCaller caller = new io.gosched.service.http.HttpCaller(hp, targets, meters);
        ServiceProperties p = TestProperties.service(Map.of());
        ServiceMetrics metrics = new ServiceMetrics(meters);
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        JobSpecs specs = new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates(), new io.gosched.service.http.HttpJobs(
                new io.gosched.service.http.HttpCallParser(targets, hp), caller, budget.sizes().maxJobBytes()), handlers);
        jobs = EmbeddedJobs.start(runtime, TestChannels.soleNode(p, metrics, budget), p, metrics, Clock.systemUTC(), budget, specs).jobs();
        return caller;
    }

    /**
     * {@link #clusterNode} as the one node of a cluster, leading, on an in-memory queue and the
     * given store (a test's store that bends some answers); sets {@link #jobs}.
     */
    JobService soleNode(JobStore store) {
        return clusterNode(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5), store, leader("n1", n -> true));
    }

    /** A node that leads and sees the nodes {@code present} accepts as members. */
    static JobNode leader(String id, Predicate<String> present) {
        return new JobNode() {
            @Override
            public String id() {
                return id;
            }

            @Override
            public boolean isLeader() {
                return true;
            }

            @Override
            public boolean isPresent(String nodeId) {
                return present.test(nodeId);
            }
        };
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (jobs != null) {
            jobs.cancelAll(Duration.ofSeconds(5));
        }
        runtime.shutdown(Duration.ofSeconds(5));
    }
}
