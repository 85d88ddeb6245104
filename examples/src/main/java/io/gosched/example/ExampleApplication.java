package io.gosched.example;

import io.gosched.runtime.SafeJvm;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A team's own application: the starter brings the job service, the beans below bring the jobs. */
@SpringBootApplication
public class ExampleApplication {

    public static void main(String[] args) {
        // A plain `java -jar` needs no flag: without the JVM options goroutines need, the process
        // re-executes itself in place with them.
        SafeJvm.relaunchIfNeeded(args);
        SpringApplication.run(ExampleApplication.class, args);
    }
}
