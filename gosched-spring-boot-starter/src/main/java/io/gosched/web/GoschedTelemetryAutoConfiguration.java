package io.gosched.web;

import io.gosched.api.GoschedApiAutoConfiguration;
import io.gosched.service.config.GoschedServiceAutoConfiguration;
import io.gosched.web.metrics.SchedulerMetrics;
import io.gosched.web.telemetry.TelemetryConfiguration;
import io.gosched.web.telemetry.TelemetryProperties;
import io.gosched.web.trace.FlightProperties;
import io.gosched.web.trace.TraceConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * The service's telemetry in any application that has the starter: the Micrometer binder of the
 * scheduler's statistics ({@code /actuator/prometheus}), the SSE telemetry stream, execution
 * traces and the flight recorder. Imported here rather than found by a component scan, so that a
 * team's own application gets it without scanning {@code io.gosched.web} (and the stand-alone
 * service does not scan it either: a scan as well would register each bean twice).
 */
@AutoConfiguration(after = {GoschedServiceAutoConfiguration.class, GoschedApiAutoConfiguration.class})
@EnableConfigurationProperties({TelemetryProperties.class, FlightProperties.class})
@Import({SchedulerMetrics.class, TelemetryConfiguration.class, TraceConfiguration.class})
public class GoschedTelemetryAutoConfiguration {
}
