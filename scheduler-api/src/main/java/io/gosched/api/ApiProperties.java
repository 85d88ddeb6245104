package io.gosched.api;

import jakarta.validation.constraints.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.annotation.Validated;

/**
 * Settings of the HTTP API itself, prefix {@code gosched.api}: the credential. What the service
 * takes on (limits, admission, retention, channels) shares the prefix and is bound by
 * {@link io.gosched.service.ServiceProperties}.
 *
 * @param token  static bearer token (it holds every scope); unset or blank: no static token (see
 *               {@code ApiSecurityAutoConfiguration} for the JWT mode). RFC 6750's token characters only
 */
@Validated
@ConfigurationProperties("gosched.api")
public record ApiProperties(
        @Pattern(regexp = "^$|^[A-Za-z0-9._~+/-]{16,512}=*$",
                message = "must be 16 to 512 characters of A-Z a-z 0-9 - . _ ~ + / (then optional =), RFC 6750's token characters")
        String token) {

    /** True when a static token is configured. */
    public boolean authEnabled() {
        return token != null && !token.isEmpty();
    }
}
