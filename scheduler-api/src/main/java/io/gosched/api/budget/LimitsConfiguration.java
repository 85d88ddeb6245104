package io.gosched.api.budget;

import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** The memory budget's view at {@code /api/v1/limits}. */
@Configuration(proxyBeanMethods = false)
@Import(LimitsController.class)
public class LimitsConfiguration {
}
