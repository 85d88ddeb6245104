package io.gosched;

import io.gosched.runtime.SafeJvm;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * The stand-alone gosched service: the starter (runtime, the scheduler-api controllers, cluster
 * mode when configured, telemetry, each from its auto-configuration) plus the built-in workloads
 * and the live page at {@code /}. Nothing of its own to scan: every part arrives through an
 * auto-configuration, exactly as in a team's application that adds the starter, so no component
 * scan is declared (a scan of {@code io.gosched.*} would register the auto-configured classes a
 * second time).
 *
 * <p>The app sits in the root package so that every {@code @SpringBootTest} below it finds it.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GoschedApplication {

    public static void main(String[] args) {
        // A plain `java -jar` needs no flag: on a JVM without the options goroutines need, this
        // process re-executes itself in place with them, same pid, no second JVM (see SafeJvm).
        SafeJvm.relaunchIfNeeded(args);
        SpringApplication.run(GoschedApplication.class, args);
    }
}
