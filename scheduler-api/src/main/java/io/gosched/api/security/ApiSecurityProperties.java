package io.gosched.api.security;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Security settings beyond the credentials, prefix {@code gosched.api.security}. The credentials
 * choose the mode: {@code gosched.api.token} (a static token holding every scope) or
 * {@code spring.security.oauth2.resourceserver.jwt.*} (JWTs from an identity provider); neither
 * leaves the API open, both stop the start-up.
 *
 * @param prometheusPublic  whether {@code /actuator/prometheus} answers scrapers without a token
 *                          (false: it needs a token with any of the service's scopes)
 * @param tokenUrl          the identity provider's token endpoint, shown in the OpenAPI document's
 *                          OAuth2 scheme (this service issues no tokens itself)
 * @param cors              cross-origin access for browsers on other origins; closed unless origins are listed
 */
@Validated
@ConfigurationProperties("gosched.api.security")
public record ApiSecurityProperties(
        @DefaultValue("true") boolean prometheusPublic,
        URI tokenUrl,
        @Valid @NotNull @DefaultValue Cors cors) {

    /**
     * CORS for the API. Tokens travel in the {@code Authorization} header, never in cookies, so
     * credentials mode is never allowed and {@code *} is a valid origin.
     *
     * @param allowedOrigins  origins (scheme, host, optional port) whose pages may call the API; empty: none
     * @param allowedMethods  methods a cross-origin page may use
     * @param allowedHeaders  request headers a cross-origin page may send
     * @param exposedHeaders  response headers a cross-origin page may read
     * @param maxAge          how long a browser may cache a preflight answer
     */
    public record Cors(
            @NotNull @DefaultValue List<@Pattern(regexp = "\\*|https?://[^/\\s?#]+",
                    message = "must be * or an origin such as https://example.com:8443 (no path)") String> allowedOrigins,
            @NotNull @DefaultValue({"GET", "HEAD", "POST", "PUT", "DELETE"}) List<String> allowedMethods,
            @NotNull @DefaultValue({"Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"}) List<String> allowedHeaders,
            @NotNull @DefaultValue({"Location", "Retry-After", "Idempotent-Replayed", "WWW-Authenticate", "Content-Disposition"})
            List<String> exposedHeaders,
            @NotNull @DefaultValue("30m") Duration maxAge) {

        public boolean enabled() {
            return !allowedOrigins.isEmpty();
        }
    }
}
