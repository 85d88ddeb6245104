package io.gosched.service.schedule;

import java.time.Clock;

import io.gosched.service.job.JobService;
import io.gosched.service.schedule.memory.InMemoryScheduleStore;
import io.gosched.service.schedule.spi.ScheduleStore;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Schedules over the job service (part of the service's auto-configuration): their store (in this process's memory unless cluster mode
 * contributed one, on NATS KV), the service the HTTP layer calls, and this node's firing thread,
 * started with the context and stopped before the job service.
 */
@Configuration(proxyBeanMethods = false)
public class ScheduleConfiguration {

    /** Embedded mode: schedules live and die with the process. */
    @Bean
    @ConditionalOnMissingBean(ScheduleStore.class)
    public InMemoryScheduleStore goschedInMemoryScheduleStore() {
        return new InMemoryScheduleStore();
    }

    @Bean
    public ScheduleMetrics goschedScheduleMetrics(ObjectProvider<MeterRegistry> registry) {
        return new ScheduleMetrics(registry.getIfAvailable());
    }

    @Bean
    public ScheduleService goschedScheduleService(ScheduleStore store, JobService jobs, ScheduleMetrics metrics) {
        return new ScheduleService(store, jobs, metrics, Clock.systemUTC());
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    public ScheduleFiring goschedScheduleFiring(ScheduleStore store, JobService jobs, ScheduleMetrics metrics) {
        return new ScheduleFiring(store, jobs, metrics, Clock.systemUTC());
    }
}
