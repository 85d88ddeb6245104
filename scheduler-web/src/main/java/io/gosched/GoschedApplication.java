package io.gosched;

import io.gosched.runtime.SafeJvm;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The gosched service, assembled: the scheduler-api controllers (jobs, channels, scheduler
 * control), cluster mode when configured, and the telemetry of {@code io.gosched.web} (Micrometer
 * binder, SSE stream, traces, live page at {@code /}).
 *
 * <p>The app sits in the root package, apart from the telemetry it assembles, so the layout says
 * which is which: {@code io.gosched.web.*} is the telemetry module's code, this class is the
 * Boot application and nothing else. Being at the root also lets every {@code @SpringBootTest}
 * below it find it. scheduler-api and scheduler-cluster arrive through their own
 * auto-configurations (scheduler-api owns the {@code GoRuntime} bean and its lifecycle), so the
 * component scan names the telemetry packages alone: scanning {@code io.gosched.api} as well
 * would register its configuration classes twice.
 */
@SpringBootApplication(scanBasePackages = "io.gosched.web")
@ConfigurationPropertiesScan("io.gosched.web")
public class GoschedApplication {

    public static void main(String[] args) {
        // A plain `java -jar` needs no flag: on a JVM without the options goroutines need, this
        // process re-executes itself in place with them, same pid, no second JVM (see SafeJvm).
        SafeJvm.relaunchIfNeeded(args);
        SpringApplication.run(GoschedApplication.class, args);
    }
}
