package io.gosched.service.config;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.job.JobService;
import io.gosched.service.runtime.GoroutineFailures;
import io.gosched.service.runtime.RuntimeProperties;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The one {@link GoRuntime} of the service, where its properties ({@code gosched.runtime}) are
 * bound (scheduler-service owns it; docs/telemetry.md), and the lifecycle that stops it after
 * HTTP has drained.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(RuntimeProperties.class)
public class RuntimeConfiguration {

    private static final Logger log = LoggerFactory.getLogger(RuntimeConfiguration.class);

    /**
     * Stopped by {@link RuntimeLifecycle}, not by the container: the order of shutdown matters.
     *
     * <p>Not Go's CRASH policy: the service runs many users' jobs in one runtime, and one job's
     * failing goroutine must fail that job, never the service. The interpreter catches what a
     * step throws and fails the job with it; an exception that still escapes a goroutine goes to
     * {@link GoroutineFailures}: a goroutine labelled {@code job=<id>} fails that job (the job
     * engine registers there), any other is logged with the goroutine's id and the runtime goes on.
     */
    @Bean
    public GoroutineFailures goroutineFailures() {
        return new GoroutineFailures();
    }

    @Bean(destroyMethod = "")
    public GoRuntime goRuntime(RuntimeProperties properties, GoroutineFailures failures) {
        return GoRuntime.start(SchedulerConfig.builder()
                .gomaxprocs(properties.effectiveGomaxprocs())
                .preemptQuantum(properties.preemptQuantum())
                .shutdownTimeout(properties.shutdownTimeout())
                .onUncaughtException((carrier, e) -> {
                    // runs on the dying goroutine: its id and labels are still its own
                    long goid = Go.goid();
                    java.util.Map<String, String> labels = Go.labels();
                    boolean owned;
                    try {
                        owned = failures.report(goid, labels, e);
                    } catch (RuntimeException | Error reporting) {
                        e.addSuppressed(reporting);
                        owned = false;
                    }
                    if (!owned) {
                        log.error("goroutine {} {} ended by an uncaught exception", goid, labels, e);
                    }
                })
                .build());
    }

    @Bean
    public RuntimeLifecycle goschedRuntimeLifecycle(GoRuntime runtime, JobService jobs, ChannelService channels,
            RuntimeProperties properties) {
        return new RuntimeLifecycle(runtime, jobs, channels, properties);
    }
}
