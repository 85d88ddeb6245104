package io.gosched.handler;

import io.gosched.service.config.GoschedServiceAutoConfiguration;
import io.gosched.service.handler.JobHandlers;
import jakarta.validation.Validator;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.validation.beanvalidation.LocalValidatorFactoryBean;
import tools.jackson.databind.json.JsonMapper;

/**
 * The application's {@link JobHandler} methods as job types: the {@link JobHandlers} the service's
 * job parser asks ({@code "handler": NAME, "args": {...}}), bound with the application's
 * {@link JsonMapper} and validated with its {@link Validator}, and {@code GET /api/v1/handlers}.
 */
@AutoConfiguration(before = GoschedServiceAutoConfiguration.class,
        afterName = {"org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
                "org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration"})
@Import(HandlersController.class)
public class GoschedHandlerAutoConfiguration {

    @Bean
    public JobHandlerRegistry goschedJobHandlers(ConfigurableListableBeanFactory beans, ObjectProvider<JsonMapper> json,
            ObjectProvider<Validator> validator) {
        return new JobHandlerRegistry(beans, json.getIfAvailable(() -> JsonMapper.builder().build()),
                validator.getIfAvailable(GoschedHandlerAutoConfiguration::defaultValidator));
    }

    /** The handlers' names and argument schemas in the job bodies of the OpenAPI document. */
    @Bean
    public OpenApiCustomizer goschedHandlersOpenApi(JobHandlerRegistry registry) {
        return new HandlersOpenApi(registry);
    }

    private static Validator defaultValidator() {
        LocalValidatorFactoryBean v = new LocalValidatorFactoryBean();
        v.afterPropertiesSet();
        return v;
    }
}
