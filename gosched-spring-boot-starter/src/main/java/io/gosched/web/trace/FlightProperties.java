package io.gosched.web.trace;

import io.gosched.runtime.FlightRecorder;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The always-on flight recorder behind {@code GET /api/v1/trace/flight} and its automatic
 * snapshots ({@code gosched.trace.flight.*}). Checked at start-up: a bad value stops the service
 * with a message naming it.
 *
 * @param enabled whether the service keeps the flight recorder running
 * @param window how far back a snapshot reaches (above 0, at most 10 minutes)
 * @param maxEventsPerP the budget of events kept per P (24 bytes each; 1 to 16777216): a window
 *     busier than that loses its oldest part, and the snapshot says {@code complete: false}
 * @param keep how many automatic snapshots are kept (the oldest goes first; 1 to 64)
 * @param minInterval the least time between two automatic snapshots: a burst of failing jobs keeps one
 * @param onJobFailure keep a snapshot when a job fails
 * @param latencyP99Bound keep a snapshot when the scheduling latency's p99 over one check interval
 *     exceeds this bound; unset: no latency trigger
 * @param latencyCheckInterval how often the latency is checked (100 ms to 1 hour)
 */
@Validated
@ConfigurationProperties("gosched.trace.flight")
public record FlightProperties(
        @DefaultValue("true") boolean enabled,
        @NotNull @DefaultValue("10s") Duration window,
        @Min(1) @Max(1 << 24) @DefaultValue("65536") int maxEventsPerP,
        @Min(1) @Max(64) @DefaultValue("4") int keep,
        @NotNull @DefaultValue("30s") Duration minInterval,
        @DefaultValue("true") boolean onJobFailure,
        Duration latencyP99Bound,
        @NotNull @DefaultValue("1s") Duration latencyCheckInterval) {

    @AssertTrue(message = "window must be above 0 and at most 10m")
    public boolean isWindowValid() {
        return window == null || (window.isPositive() && window.compareTo(FlightRecorder.MAX_WINDOW) <= 0);
    }

    @AssertTrue(message = "min-interval must not be negative")
    public boolean isMinIntervalValid() {
        return minInterval == null || !minInterval.isNegative();
    }

    @AssertTrue(message = "latency-p99-bound must be positive when set")
    public boolean isLatencyP99BoundValid() {
        return latencyP99Bound == null || latencyP99Bound.isPositive();
    }

    @AssertTrue(message = "latency-check-interval must be between 100ms and 1h")
    public boolean isLatencyCheckIntervalValid() {
        return latencyCheckInterval == null || (latencyCheckInterval.compareTo(Duration.ofMillis(100)) >= 0
                && latencyCheckInterval.compareTo(Duration.ofHours(1)) <= 0);
    }
}
