package io.gosched.web.trace;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** Execution traces and the flight recorder, with their controllers (package-private: this imports them). */
@Configuration(proxyBeanMethods = false)
@Import({TraceRecorder.class, FlightRecorderService.class, TraceController.class, FlightController.class})
public class TraceConfiguration {
}
