package io.gosched.api.workload;

import io.gosched.service.workload.WorkloadTemplates;

import io.gosched.service.workload.WorkloadParser;

import io.gosched.service.ServiceProperties;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The DSL parser, the templates and their catalogue endpoint. */
@Configuration(proxyBeanMethods = false)
@Import(WorkloadController.class)
public class WorkloadConfiguration {

    @Bean
    public WorkloadParser workloadParser(ServiceProperties properties) {
        return new WorkloadParser(properties.limits());
    }

    @Bean
    public WorkloadTemplates workloadTemplates() {
        return new WorkloadTemplates();
    }
}
