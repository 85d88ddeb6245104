package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration;
import org.springframework.context.annotation.Configuration;

/** Bad telemetry settings stop the service at start with a message naming them. */
class TelemetryPropertiesTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(TelemetryProperties.class)
    static class Props {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
            .withUserConfiguration(Props.class);

    @Test
    void defaultsBind() {
        runner.run(ctx -> {
            TelemetryProperties p = ctx.getBean(TelemetryProperties.class);
            assertThat(p.snapshotTtl()).hasMillis(20);
            assertThat(p.stream().defaultInterval()).hasSeconds(1);
            assertThat(p.stream().minInterval()).hasMillis(100);
            assertThat(p.stream().maxInterval()).hasSeconds(10);
        });
    }

    @Test
    void rejectsADefaultOutsideTheBounds() {
        runner.withPropertyValues("gosched.telemetry.stream.default-interval=20s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("gosched.telemetry.stream").hasMessageContaining("min-interval <= default-interval <= max-interval"));
    }

    @Test
    void rejectsAZeroTickAndANegativeTtlAndKeepalive() {
        runner.withPropertyValues("gosched.telemetry.stream.min-interval=0s")
                .run(ctx -> assertThat(ctx).hasFailed());
        runner.withPropertyValues("gosched.telemetry.snapshot-ttl=-1ms")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("snapshot-ttl"));
        runner.withPropertyValues("gosched.telemetry.stream.keepalive=0s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause().hasMessageContaining("keepalive"));
    }
}
