package io.gosched.api.scheduler;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The one {@link GoRuntime} of the service (CONTRACT.md: scheduler-api owns it) and the
 * lifecycle that stops it after HTTP has drained.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(RuntimeProperties.class)
@Import(SchedulerController.class)
public class RuntimeConfiguration {

    /** Stopped by {@link RuntimeLifecycle}, not by the container: the order of shutdown matters. */
    @Bean(destroyMethod = "")
    public GoRuntime goRuntime(RuntimeProperties properties) {
        return GoRuntime.start(SchedulerConfig.builder()
                .gomaxprocs(properties.effectiveGomaxprocs())
                .preemptQuantum(properties.preemptQuantum())
                .shutdownTimeout(properties.shutdownTimeout())
                .build());
    }
}
