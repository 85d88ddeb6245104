package io.gosched.api;

import io.gosched.service.metrics.ServiceMetrics;

import io.gosched.service.ServiceProperties;

import io.gosched.api.budget.BudgetConfiguration;
import io.gosched.api.channel.ChannelConfiguration;
import io.gosched.service.channel.ChannelService;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.error.ProblemErrorWebExceptionHandler;
import io.gosched.api.error.WireEnums;
import io.gosched.api.job.JobConfiguration;
import io.gosched.service.job.JobService;
import io.gosched.api.debug.DebugConfiguration;
import io.gosched.api.scheduler.RuntimeConfiguration;
import io.gosched.api.scheduler.RuntimeLifecycle;
import io.gosched.service.runtime.RuntimeProperties;
import io.gosched.api.security.BodyLimitFilter;
import io.gosched.api.workload.WorkloadConfiguration;
import io.gosched.runtime.GoRuntime;
import io.micrometer.core.instrument.MeterRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * Everything scheduler-api contributes to an application that has it on the class path: the
 * runtime, the memory budget, jobs, channels, scheduler control, problem details and body limits
 * (authentication and authorization: {@code ApiSecurityAutoConfiguration}). Runs
 * before Boot's WebFlux auto-configuration so that its {@code ProblemDetailsExceptionHandler}
 * backs off in favour of {@link ApiExceptionHandler}.
 */
@AutoConfiguration(beforeName = {"org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration",
        "org.springframework.boot.webflux.autoconfigure.error.ErrorWebFluxAutoConfiguration"})
@EnableConfigurationProperties({ApiProperties.class, ServiceProperties.class})
@Import({RuntimeConfiguration.class, BudgetConfiguration.class, WorkloadConfiguration.class, ChannelConfiguration.class,
        JobConfiguration.class, DebugConfiguration.class})
public class GoschedApiAutoConfiguration {

    @Bean
    public ServiceMetrics goschedApiMetrics(ObjectProvider<MeterRegistry> registry) {
        return new ServiceMetrics(registry.getIfAvailable());
    }

    @Bean
    public RuntimeLifecycle goschedRuntimeLifecycle(GoRuntime runtime, JobService jobs, ChannelService channels,
            RuntimeProperties properties) {
        return new RuntimeLifecycle(runtime, jobs, channels, properties);
    }

    @Bean
    public ApiExceptionHandler goschedApiExceptionHandler() {
        return new ApiExceptionHandler();
    }

    /** Enum-typed request parameters by their lower-case wire names (see {@link WireEnums}). */
    @Bean
    public WebFluxConfigurer goschedWireEnums() {
        return new WireEnums.Formatters();
    }

    @Bean
    public ProblemErrorWebExceptionHandler goschedProblemErrorWebExceptionHandler(ObjectProvider<JsonMapper> json) {
        return new ProblemErrorWebExceptionHandler(json.getIfAvailable(() -> JsonMapper.builder().build()));
    }

    /** 414 and 431, which Netty answers before Spring sees the request, as problem details too. */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnClass(name = "reactor.netty.http.server.HttpServer")
    public io.gosched.api.error.DecoderFailureProblems goschedDecoderFailureProblems() {
        return new io.gosched.api.error.DecoderFailureProblems();
    }

    @Bean
    public BodyLimitFilter goschedBodyLimitFilter(ServiceProperties properties) {
        return new BodyLimitFilter(properties);
    }
}
