package io.gosched.api.channel;

import io.gosched.service.channel.ChannelService;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelDirectory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The named-channel registry and its controller; in cluster mode over the channel directory. */
@Configuration(proxyBeanMethods = false)
@Import(ChannelController.class)
public class ChannelConfiguration {

    @Bean
    public ChannelService channelService(ServiceProperties properties, ServiceMetrics metrics, ServiceBudget budget,
            ObjectProvider<ChannelDirectory> directory) {
        // Cluster mode provides a directory; the node then serves its channels to the others
        // (scheduler-cluster's configuration hands them to it).
        return new ChannelService(properties, metrics, budget, directory.getIfAvailable());
    }
}
