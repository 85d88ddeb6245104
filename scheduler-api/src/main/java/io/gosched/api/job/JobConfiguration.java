package io.gosched.api.job;

import io.gosched.service.job.spi.JobStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/** The job endpoints (the job service itself is scheduler-service's bean). */
@Configuration(proxyBeanMethods = false)
@Import(JobController.class)
public class JobConfiguration {

    /**
     * Over a shared store (cluster mode) the job endpoints call the store and the queue over the
     * network, so they run on virtual threads instead of Netty's event loop (the SSE endpoint
     * returns a Flux and stays where it is). An in-memory store answers under short locks.
     */
    @Bean
    public WebFluxConfigurer goschedJobBlockingExecution(ObjectProvider<JobStore> store) {
        return new WebFluxConfigurer() {
            @Override
            public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
                JobStore s = store.getIfAvailable();
                if (s == null || !s.isShared()) {
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
