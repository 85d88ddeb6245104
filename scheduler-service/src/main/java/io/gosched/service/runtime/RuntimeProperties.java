package io.gosched.service.runtime;

import java.time.Duration;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The service's G/M/P runtime, prefix {@code gosched.runtime}.
 *
 * @param gomaxprocs       number of Ps; 0 means the number of available processors (Go's default)
 * @param preemptQuantum   how long a goroutine may run before sysmon asks it to yield (Go: 10 ms)
 * @param shutdownTimeout  how long shutdown waits for goroutines to end
 */
@Validated
@ConfigurationProperties("gosched.runtime")
public record RuntimeProperties(
        @Min(0) @Max(1024) @DefaultValue("0") int gomaxprocs,
        @NotNull @DefaultValue("10ms") Duration preemptQuantum,
        @NotNull @DefaultValue("10s") Duration shutdownTimeout) {

    /** The quantum must be positive and at most a second: beyond that preemption is meaningless. */
    @AssertTrue(message = "preempt-quantum must be between 1 microsecond and 1 second")
    boolean isPreemptQuantumInRange() {
        return preemptQuantum == null || (preemptQuantum.toNanos() >= 1_000 && preemptQuantum.compareTo(Duration.ofSeconds(1)) <= 0);
    }

    @AssertTrue(message = "shutdown-timeout must be between 0 and 10 minutes")
    boolean isShutdownTimeoutInRange() {
        return shutdownTimeout == null || (!shutdownTimeout.isNegative() && shutdownTimeout.compareTo(Duration.ofMinutes(10)) <= 0);
    }

    /** The effective GOMAXPROCS. */
    public int effectiveGomaxprocs() {
        return gomaxprocs == 0 ? Runtime.getRuntime().availableProcessors() : gomaxprocs;
    }
}
