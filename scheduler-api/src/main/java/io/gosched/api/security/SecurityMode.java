package io.gosched.api.security;

/** How callers prove who they are; chosen by the properties set, checked once at start-up. */
public enum SecurityMode {
    /** Nothing is configured: every call is allowed (a warning at start-up says so). The firewall still applies. */
    OPEN,
    /** {@code gosched.api.token}: one shared token holding every scope, for a lab. */
    STATIC_TOKEN,
    /** {@code spring.security.oauth2.resourceserver.jwt.*}: JWTs from an identity provider, scopes from their claims. */
    JWT
}
