package io.gosched.api.channel;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The named-channel endpoints (the registry is scheduler-service's bean). */
@Configuration(proxyBeanMethods = false)
@Import({ChannelController.class, SelectController.class})
public class ChannelConfiguration {
}
