package io.gosched.api.channel;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The named-channel registry and its controller. */
@Configuration(proxyBeanMethods = false)
@Import(ChannelController.class)
public class ChannelConfiguration {

    @Bean
    public ChannelService channelService(ApiProperties properties, ApiMetrics metrics, ServiceBudget budget) {
        return new ChannelService(properties, metrics, budget);
    }
}
