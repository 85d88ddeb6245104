package io.gosched.api.job;

import java.time.Clock;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.scheduler.GoroutineFailures;
import io.gosched.api.workload.WorkloadParser;
import io.gosched.api.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;

import io.gosched.api.channel.spi.ChannelDirectory;
import io.gosched.api.job.spi.JobNode;
import io.gosched.api.job.spi.JobQueue;
import io.gosched.api.job.spi.JobStore;

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
    public JobService jobService(GoRuntime runtime, ChannelService channels, ApiProperties properties, ApiMetrics metrics,
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
