package io.gosched.api.job;

import java.time.Clock;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.workload.WorkloadParser;
import io.gosched.api.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The job service and its controller. */
@Configuration(proxyBeanMethods = false)
@Import(JobController.class)
public class JobConfiguration {

    @Bean
    public JobService jobService(GoRuntime runtime, ChannelService channels, ApiProperties properties, ApiMetrics metrics,
            WorkloadParser parser, WorkloadTemplates templates, ServiceBudget budget) {
        return new JobService(runtime, channels, properties, metrics, parser, templates, Clock.systemUTC(), budget);
    }
}
