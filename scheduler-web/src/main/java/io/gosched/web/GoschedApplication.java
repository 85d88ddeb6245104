package io.gosched.web;

import io.gosched.runtime.SafeJvm;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The gosched service: the scheduler-api controllers (jobs, channels, scheduler control) plus this
 * module's telemetry (Micrometer binder, SSE stream, live page at {@code /}).
 *
 * <p>scheduler-api arrives through its own auto-configuration (it owns the {@code GoRuntime} bean
 * and its lifecycle), so the component scan stays on this module's packages: scanning
 * {@code io.gosched.api} as well would register its configuration classes twice.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class GoschedApplication {

    public static void main(String[] args) {
        // A plain `java -jar` needs no flag: on a JVM without the options goroutines need, run
        // this same command line again in one that has them (see SafeJvm).
        SafeJvm.relaunchIfNeeded(args);
        SpringApplication.run(GoschedApplication.class, args);
    }
}
