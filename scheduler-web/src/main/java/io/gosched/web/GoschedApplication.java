package io.gosched.web;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The gosched service: the scheduler-api controllers (jobs, channels, scheduler control) plus this
 * module's telemetry (Micrometer binder, SSE stream, live page at {@code /}).
 *
 * <p>The scan covers all of {@code io.gosched} because scheduler-api is a plain jar of controllers
 * and services with no application class of its own (it owns the {@code GoRuntime} bean).
 */
@SpringBootApplication(scanBasePackages = "io.gosched")
@ConfigurationPropertiesScan("io.gosched")
public class GoschedApplication {

    public static void main(String[] args) {
        SpringApplication.run(GoschedApplication.class, args);
    }
}
