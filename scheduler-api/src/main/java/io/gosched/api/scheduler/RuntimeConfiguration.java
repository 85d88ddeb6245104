package io.gosched.api.scheduler;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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

    private static final Logger log = LoggerFactory.getLogger(RuntimeConfiguration.class);

    /**
     * Stopped by {@link RuntimeLifecycle}, not by the container: the order of shutdown matters.
     *
     * <p>Not Go's CRASH policy: the service runs many users' jobs in one runtime, and one job's
     * failing goroutine must fail that job, never the service. The interpreter catches what a
     * job's goroutines throw and fails the job with it; whatever still escapes a goroutine (a bug
     * of the service's own) is logged with the goroutine's id and the runtime goes on.
     */
    @Bean(destroyMethod = "")
    public GoRuntime goRuntime(RuntimeProperties properties) {
        return GoRuntime.start(SchedulerConfig.builder()
                .gomaxprocs(properties.effectiveGomaxprocs())
                .preemptQuantum(properties.preemptQuantum())
                .shutdownTimeout(properties.shutdownTimeout())
                .onUncaughtException((carrier, e) -> log.error("goroutine {} ended by an uncaught exception", Go.goid(), e))
                .build());
    }
}
