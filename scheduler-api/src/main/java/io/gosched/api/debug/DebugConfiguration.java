package io.gosched.api.debug;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The runtime's debugging endpoints: goroutine dumps and leak reports (Go: /debug/pprof/goroutine). */
@Configuration(proxyBeanMethods = false)
@Import(GoroutineController.class)
public class DebugConfiguration {
}
