package io.gosched.api.testapp;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * A real runtime of two Ps for a web slice test, closed with its context: the slices import it
 * instead of the whole auto-configuration, which would bring the job and channel services too.
 */
@TestConfiguration(proxyBeanMethods = false)
public class TwoProcRuntime {

    @Bean(destroyMethod = "close")
    GoRuntime goRuntime() {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    }
}
