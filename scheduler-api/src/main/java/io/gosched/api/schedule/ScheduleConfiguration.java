package io.gosched.api.schedule;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The schedule endpoints (the schedule service itself is scheduler-service's bean). */
@Configuration(proxyBeanMethods = false)
@Import(ScheduleController.class)
public class ScheduleConfiguration {}
