package io.gosched.api.security;

import io.gosched.api.GoschedApiAutoConfiguration;
import io.gosched.service.config.GoschedServiceAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableReactiveWebApplicationContext;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** The mode is chosen by the properties set and checked at start-up; a bad combination stops it, naming the property. */
class SecurityConfigurationTest {

    static final String JWK_SET_URI = "spring.security.oauth2.resourceserver.jwt.jwk-set-uri=http://127.0.0.1:1/jwks";

    final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("gosched.runtime.gomaxprocs=1")
            .withConfiguration(AutoConfigurations.of(GoschedServiceAutoConfiguration.class, GoschedApiAutoConfiguration.class, ApiSecurityAutoConfiguration.class,
                    org.springframework.boot.validation.autoconfigure.ValidationAutoConfiguration.class,
                    org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration.class,
                    org.springframework.boot.security.oauth2.server.resource.autoconfigure.reactive.ReactiveOAuth2ResourceServerAutoConfiguration.class));

    @Test
    void thePropertiesChooseTheMode() {
        runner.run(ctx -> assertThat(ctx.getBean(SecurityMode.class)).isEqualTo(SecurityMode.OPEN));
        runner.withPropertyValues("gosched.api.token=lab-token-0123456789")
                .run(ctx -> assertThat(ctx.getBean(SecurityMode.class)).isEqualTo(SecurityMode.STATIC_TOKEN));
        // No network at start-up: the keys are fetched with the first token.
        runner.withPropertyValues(JWK_SET_URI).run(ctx -> assertThat(ctx.getBean(SecurityMode.class)).isEqualTo(SecurityMode.JWT));
        runner.withPropertyValues("spring.security.oauth2.resourceserver.jwt.issuer-uri=http://127.0.0.1:1/realms/x")
                .run(ctx -> assertThat(ctx.getBean(SecurityMode.class)).isEqualTo(SecurityMode.JWT));
        runner.withPropertyValues("gosched.api.token=").run(ctx -> assertThat(ctx.getBean(SecurityMode.class)).isEqualTo(SecurityMode.OPEN));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "gosched.api.token=lab-token-0123456789," + JWK_SET_URI + " | gosched.api.token | not both",
            "spring.security.oauth2.resourceserver.opaquetoken.introspection-uri=http://127.0.0.1:1/introspect | introspection-uri | opaque tokens",
            "gosched.api.security.prometheus-public=false | prometheus-public | needs credentials",
            "gosched.api.token=has!bang-0123456789 | token | RFC 6750",
            "gosched.api.token=with space 0123456789 | token | RFC 6750",
            "gosched.api.security.cors.allowed-origins=https://app.example/path | allowedOrigins | origin",
            "gosched.api.security.cors.allowed-origins=app.example | allowedOrigins | origin",
            "spring.security.oauth2.resourceserver.jwt.jws-algorithms=XS999," + JWK_SET_URI + " | jws-algorithms | Unknown algorithm"})
    void aBadCombinationStopsTheStartNamingTheProperty(String properties, String property, String reason) {
        runner.withPropertyValues(properties.split(",")).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(messages(ctx)).contains(property).containsIgnoringCase(reason);
        });
    }

    @Test
    void aProtectedPrometheusWithCredentialsStarts() {
        runner.withPropertyValues("gosched.api.security.prometheus-public=false", "gosched.api.token=lab-token-0123456789")
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    @Test
    void aStaticTokenIsNeverPrinted() {
        runner.withPropertyValues("gosched.api.token=lab-token-0123456789", JWK_SET_URI)
                .run(ctx -> assertThat(messages(ctx)).doesNotContain("lab-token-0123456789"));
    }

    private static String messages(AssertableReactiveWebApplicationContext ctx) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = ctx.getStartupFailure(); t != null; t = t.getCause()) {
            sb.append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }
}
