package io.gosched.api.channel;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.spi.ChannelDirectory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The named-channel registry and its controller; in cluster mode over the channel directory. */
@Configuration(proxyBeanMethods = false)
@Import(ChannelController.class)
public class ChannelConfiguration {

    @Bean
    public ChannelService channelService(ApiProperties properties, ApiMetrics metrics, ServiceBudget budget,
            ObjectProvider<ChannelDirectory> directory) {
        // Cluster mode provides a directory; the node then serves its channels to the others
        // (scheduler-cluster's configuration hands them to it).
        return new ChannelService(properties, metrics, budget, directory.getIfAvailable());
    }
}
