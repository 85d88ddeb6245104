package io.gosched.api.budget;

import io.gosched.service.budget.ServiceBudget;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The service's budget, checked against the heap at start-up, and its view at {@code /api/v1/limits}. */
@Configuration(proxyBeanMethods = false)
@Import(LimitsController.class)
public class BudgetConfiguration {

    @Bean
    public ServiceBudget goschedServiceBudget(ServiceProperties properties, ServiceMetrics metrics) {
        return ServiceBudget.of(properties, metrics);
    }
}
