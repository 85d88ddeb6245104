package io.gosched.api.scheduler;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** Scheduler control over HTTP (the runtime is scheduler-service's bean). */
@Configuration(proxyBeanMethods = false)
@Import(SchedulerController.class)
public class SchedulerConfiguration {
}
