package io.gosched.api.job;

import io.gosched.service.job.JobService;

import java.time.Clock;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.runtime.GoroutineFailures;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;

import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The job service and its controller. */
@Configuration(proxyBeanMethods = false)
@Import(JobController.class)
public class JobConfiguration {

    @Bean
    public JobService jobService(GoRuntime runtime, ChannelService channels, ServiceProperties properties, ServiceMetrics metrics,
            WorkloadParser parser, WorkloadTemplates templates, ServiceBudget budget, ObjectProvider<JobQueue> queue,
            ObjectProvider<JobStore> store, ObjectProvider<JobNode> node, ObjectProvider<ChannelDirectory> directory,
            ObjectProvider<GoroutineFailures> goroutineFailures) {
        JobQueue q = queue.getIfAvailable();
        JobStore st = store.getIfAvailable();
        JobNode n = node.getIfAvailable();
        JobService.Ports ports = null;
        if (q != null || st != null || n != null) {
            if (q == null || st == null || n == null) {
                throw new IllegalStateException("a shared job queue, job store and node come together: found queue " + q + ", store " + st
                        + ", node " + n);
            }
            ports = new JobService.Ports(q, st, n, directory.getIfAvailable());
        }
        JobService service = new JobService(runtime, channels, properties, metrics, parser, templates, Clock.systemUTC(), budget, ports);
        // a job's goroutine that dies by an uncaught exception fails its job, not the service
        goroutineFailures.ifAvailable(f -> f.register(service::goroutineFailed));
        return service;
    }

    /**
     * Cluster mode: the job endpoints call the store and the queue over the network, so they run on
     * virtual threads instead of Netty's event loop (the SSE endpoint returns a Flux and stays where it is).
     */
    @Bean
    public WebFluxConfigurer goschedJobBlockingExecution(ObjectProvider<JobQueue> queue) {
        return new WebFluxConfigurer() {
            @Override
            public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
                if (queue.getIfAvailable() == null) {
                    return;
                }
                SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("gosched-jobs-http-");
                executor.setVirtualThreads(true);
                configurer.setExecutor(executor);
                configurer.setControllerMethodPredicate(m -> m.getBeanType() == JobController.class);
            }
        };
    }
}
