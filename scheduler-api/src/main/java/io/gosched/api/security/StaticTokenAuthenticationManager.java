package io.gosched.api.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;

import reactor.core.publisher.Mono;

import org.springframework.security.authentication.AbstractAuthenticationToken;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.oauth2.server.resource.InvalidBearerTokenException;
import org.springframework.security.oauth2.server.resource.authentication.BearerTokenAuthenticationToken;

/**
 * Static-token mode: the bearer token Spring's resource-server filter extracted is compared with
 * {@code gosched.api.token}, and on a match the caller holds every {@link ApiScope}.
 *
 * <p>The comparison is of SHA-256 digests with {@link MessageDigest#isEqual}: both operands have
 * the same length whatever the client sent, so the time taken tells nothing about how much of
 * the token matched, nor its length.
 */
final class StaticTokenAuthenticationManager implements ReactiveAuthenticationManager {

    private final byte[] expected;
    private final Collection<? extends GrantedAuthority> authorities;

    StaticTokenAuthenticationManager(String token, Collection<? extends GrantedAuthority> authorities) {
        this.expected = sha256(token);
        this.authorities = authorities;
    }

    @Override
    public Mono<Authentication> authenticate(Authentication authentication) {
        if (!(authentication instanceof BearerTokenAuthenticationToken bearer)) {
            return Mono.empty();
        }
        if (!MessageDigest.isEqual(expected, sha256(bearer.getToken()))) {
            return Mono.error(new InvalidBearerTokenException("the token is not the one this service is configured with"));
        }
        return Mono.just(new StaticToken(authorities));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The caller who presented the configured token. Its credentials are not kept. */
    static final class StaticToken extends AbstractAuthenticationToken {

        StaticToken(Collection<? extends GrantedAuthority> authorities) {
            super(authorities);
            setAuthenticated(true);
        }

        @Override
        public Object getCredentials() {
            return "";
        }

        @Override
        public Object getPrincipal() {
            return "static-token";
        }
    }
}
