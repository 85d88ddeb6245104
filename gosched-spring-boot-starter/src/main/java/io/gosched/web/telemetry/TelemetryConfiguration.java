package io.gosched.web.telemetry;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The SSE telemetry stream and its controller (the controller stays package-private: this imports it). */
@Configuration(proxyBeanMethods = false)
@Import({SchedStatsSource.class, TelemetryStream.class, TelemetryController.class})
public class TelemetryConfiguration {
}
