package io.gosched.service.config;

import java.time.Clock;

import io.gosched.runtime.GoRuntime;
import io.gosched.service.ServiceProperties;
import io.gosched.service.http.HttpCallParser;
import io.gosched.service.http.HttpCaller;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.http.HttpJobs;
import io.gosched.service.http.HttpJobProperties;
import io.gosched.service.http.HttpTargets;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.channel.ChannelSelect;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.job.JobService;
import io.gosched.service.job.JobSpecs;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.runtime.GoroutineFailures;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The service's domain in an application that has scheduler-service on its class path: the
 * runtime and its lifecycle, the meters, the memory budget, the workload parser and templates,
 * named channels and jobs, and the node's one shutdown state. The ports of jobs and channels are
 * beans: the embedded ones ({@link EmbeddedMode}) unless another auto-configuration contributed
 * its own (scheduler-cluster's, on NATS), which is all that tells one mode from the other.
 * Nothing here serves HTTP (scheduler-api does).
 */
@AutoConfiguration
@EnableConfigurationProperties({ServiceProperties.class, HttpJobProperties.class})
@Import({RuntimeConfiguration.class, EmbeddedMode.class, io.gosched.service.schedule.ScheduleConfiguration.class})
public class GoschedServiceAutoConfiguration {

    @Bean
    public ServiceMetrics goschedServiceMetrics(ObjectProvider<MeterRegistry> registry) {
        return new ServiceMetrics(registry.getIfAvailable());
    }

    /** The service's budget, checked against the heap at start-up. */
    @Bean
    public ServiceBudget goschedServiceBudget(ServiceProperties properties, ServiceMetrics metrics) {
        return ServiceBudget.of(properties, metrics);
    }

    @Bean
    public WorkloadParser workloadParser(ServiceProperties properties) {
        return new WorkloadParser(properties.limits());
    }

    @Bean
    public WorkloadTemplates workloadTemplates() {
        return new WorkloadTemplates();
    }

    /** Job bodies of every kind; the application's handlers come from a {@link JobHandlers} bean (the starter's), if any. */
    @Bean
    public JobSpecs goschedJobSpecs(WorkloadParser parser, WorkloadTemplates templates, HttpJobs http,
            ObjectProvider<JobHandlers> handlers) {
        return new JobSpecs(parser, templates, http, handlers.getIfAvailable(() -> JobHandlers.NONE));
    }

    /** HTTP-target jobs: a job's answer body is bounded by its share of the memory budget. */
    @Bean
    public HttpJobs goschedHttpJobs(HttpJobProperties properties, HttpTargets targets, HttpCaller caller, ServiceBudget budget) {
        return new HttpJobs(new HttpCallParser(targets, properties), caller, budget.sizes().maxJobBytes());
    }

    /** What HTTP-target jobs may call ({@code gosched.jobs.http}); an unusable URL there stops the start, naming it. */
    @Bean
    public HttpTargets goschedHttpTargets(HttpJobProperties properties) {
        return new HttpTargets(properties);
    }

    /** Makes HTTP-target jobs' calls; its client's threads end with the context. */
    @Bean(destroyMethod = "close")
    public HttpCaller goschedHttpCaller(HttpJobProperties properties, HttpTargets targets, ObjectProvider<MeterRegistry> registry) {
        return new HttpCaller(properties, targets, registry.getIfAvailable());
    }

    /** This node's one shutdown state, which the job service and the named channels share. */
    @Bean
    public ServiceShutdown goschedServiceShutdown() {
        return new ServiceShutdown();
    }

    /** The channels living on this node; in a cluster, also what the node serves to the others. */
    @Bean
    public ChannelRegistry goschedChannelRegistry(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget,
            ChannelDirectory directory, ServiceShutdown shutdown) {
        return new ChannelRegistry(properties, metrics, budget, directory, shutdown);
    }

    /** Named channels wherever they live: here, or through the directory and forwarder on another node. */
    @Bean
    public ChannelService channelService(ChannelRegistry registry, ChannelDirectory directory, ChannelForwarder forwarder,
            ServiceMetrics metrics, ServiceBudget budget, ServiceShutdown shutdown) {
        return new ChannelService(registry, directory, forwarder, metrics, budget, shutdown);
    }

    /** Go's select over named channels for HTTP clients: the runtime's select here, rounds across nodes. */
    @Bean
    public ChannelSelect goschedChannelSelect(ChannelService channels, GoRuntime runtime, ServiceMetrics metrics, ServiceBudget budget,
            ServiceShutdown shutdown) {
        return new ChannelSelect(channels, runtime, metrics, budget, shutdown);
    }

    @Bean
    public JobService jobService(GoRuntime runtime, ChannelService channels, ServiceProperties properties, ServiceMetrics metrics,
            JobSpecs specs, ServiceBudget budget, JobQueue queue, JobStore store, JobNode node, ServiceShutdown shutdown,
            ObjectProvider<GoroutineFailures> goroutineFailures) {
        JobService service = new JobService(runtime, channels, properties, metrics, specs, Clock.systemUTC(), budget, queue, store, node,
                shutdown);
        // a job's goroutine that dies by an uncaught exception fails its job, not the service
        goroutineFailures.ifAvailable(f -> f.register(service::goroutineFailed));
        return service;
    }
}
