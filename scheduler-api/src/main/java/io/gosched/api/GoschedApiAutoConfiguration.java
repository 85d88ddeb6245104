package io.gosched.api;

import io.gosched.api.budget.LimitsConfiguration;
import io.gosched.api.channel.ChannelConfiguration;
import io.gosched.api.debug.DebugConfiguration;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.error.ApiProblem;
import io.gosched.api.error.DecoderFailureProblems;
import io.gosched.api.error.ProblemErrorWebExceptionHandler;
import io.gosched.api.error.WireEnums;
import io.gosched.api.job.JobConfiguration;
import io.gosched.api.schedule.ScheduleConfiguration;
import io.gosched.api.scheduler.SchedulerConfiguration;
import io.gosched.api.security.BodyLimitFilter;
import io.gosched.api.workload.WorkloadConfiguration;
import io.gosched.service.ServiceProperties;
import io.gosched.service.config.GoschedServiceAutoConfiguration;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * What scheduler-api contributes to an application that has it on the class path: the HTTP face
 * of the service that scheduler-service's auto-configuration assembles (jobs, channels, scheduler
 * control, workloads, limits, goroutine dumps), problem details for every error, the domain's
 * exceptions among them ({@link ApiProblem#of}), and body limits (authentication and
 * authorization: {@code ApiSecurityAutoConfiguration}). Runs before Boot's WebFlux
 * auto-configuration so that its {@code ProblemDetailsExceptionHandler} backs off in favour of
 * {@link ApiExceptionHandler}.
 */
@AutoConfiguration(after = GoschedServiceAutoConfiguration.class,
        beforeName = {"org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration",
                "org.springframework.boot.webflux.autoconfigure.error.ErrorWebFluxAutoConfiguration"})
@EnableConfigurationProperties(ApiProperties.class)
@Import({SchedulerConfiguration.class, LimitsConfiguration.class, WorkloadConfiguration.class, ChannelConfiguration.class,
        JobConfiguration.class, DebugConfiguration.class, ScheduleConfiguration.class})
public class GoschedApiAutoConfiguration {

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
    @ConditionalOnClass(name = "reactor.netty.http.server.HttpServer")
    public DecoderFailureProblems goschedDecoderFailureProblems() {
        return new DecoderFailureProblems();
    }

    @Bean
    public BodyLimitFilter goschedBodyLimitFilter(ServiceProperties properties) {
        return new BodyLimitFilter(properties);
    }
}
