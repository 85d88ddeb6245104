package io.gosched.api;

import io.gosched.service.ServiceProperties;

import io.gosched.runtime.GoRuntime;
import io.gosched.service.config.GoschedServiceAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad configuration stops the application at start-up, naming the property. */
class ConfigurationBindingTest {

    final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GoschedServiceAutoConfiguration.class, GoschedApiAutoConfiguration.class,
                    org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration.class));

    @ParameterizedTest
    @ValueSource(strings = {"gosched.api.limits.max-depth=0", "gosched.api.limits.max-body-bytes=10",
            "gosched.api.admission.max-running-jobs=0", "gosched.api.retention.max-finished-jobs=-1",
            "gosched.api.channels.max-timeout-ms=-5", "gosched.api.token=short", "gosched.runtime.gomaxprocs=-1",
            "gosched.runtime.preempt-quantum=5s", "gosched.runtime.gomaxprocs=lots",
            "gosched.api.limits.max-retained-bytes=1000", "gosched.api.limits.max-retained-bytes=999999999999999",
            "gosched.api.limits.max-channel-bytes=100", "gosched.api.limits.max-job-bytes=999999999999999",
            "gosched.api.admission.max-open-streams=-1", "gosched.api.admission.max-pending-channel-calls=-1"})
    void badValuesFailTheStartNamingTheProperty(String property) {
        runner.withPropertyValues(property).run(ctx -> {
            assertThat(ctx).hasFailed();
            String key = property.substring(property.lastIndexOf('.') + 1, property.indexOf('='));
            StringBuilder messages = new StringBuilder();
            for (Throwable t = ctx.getStartupFailure(); t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString().replace("-", "")).containsIgnoringCase(key.replace("-", ""));
        });
    }

    @Test
    void defaultsStartAndBindEveryLimit() {
        runner.withPropertyValues("gosched.runtime.gomaxprocs=1").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            ServiceProperties p = ctx.getBean(ServiceProperties.class);
            assertThat(p.limits().maxDepth()).isEqualTo(8);
            assertThat(p.admission().maxQueuedJobs()).isEqualTo(10_000);
            assertThat(ctx.getBean(ApiProperties.class).authEnabled()).isFalse();
            assertThat(p.limits().maxRetainedBytes()).as("unset: a fraction of the heap").isNull();
            assertThat(ctx.getBean(io.gosched.service.budget.ServiceBudget.class).memory().max())
                    .isEqualTo((long) (Runtime.getRuntime().maxMemory() * io.gosched.service.budget.MemoryBudget.DEFAULT_HEAP_FRACTION));
            assertThat(ctx.getBean(GoRuntime.class).gomaxprocs()).isEqualTo(1);
        });
    }
}
