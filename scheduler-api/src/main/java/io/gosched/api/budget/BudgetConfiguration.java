package io.gosched.api.budget;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The service's budget, checked against the heap at start-up, and its view at {@code /api/v1/limits}. */
@Configuration(proxyBeanMethods = false)
@Import(LimitsController.class)
public class BudgetConfiguration {

    @Bean
    public ServiceBudget goschedServiceBudget(ApiProperties properties, ApiMetrics metrics) {
        return ServiceBudget.of(properties, metrics);
    }
}
