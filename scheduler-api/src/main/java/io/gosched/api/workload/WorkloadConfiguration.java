package io.gosched.api.workload;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The catalogue of templates and DSL ops (the parser and the templates are scheduler-service's beans). */
@Configuration(proxyBeanMethods = false)
@Import(WorkloadController.class)
public class WorkloadConfiguration {
}
