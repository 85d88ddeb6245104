package io.gosched.api.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import io.gosched.api.ApiProperties;
import io.gosched.api.error.ApiProblem;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Optional bearer-token auth: when {@code gosched.api.token} is set, every call under
 * {@code /api/v1} must carry {@code Authorization: Bearer <token>}, else 401. The OpenAPI
 * document, Swagger UI and actuator are left to the application (they carry no job data).
 * The comparison takes the same time whatever the prefix matched (MessageDigest.isEqual).
 */
public class BearerTokenFilter implements WebFilter, Ordered {

    /** The protected path prefix. */
    public static final String API_PREFIX = "/api/v1";

    private final byte[] expected;

    public BearerTokenFilter(ApiProperties properties) {
        this.expected = properties.authEnabled() ? ("Bearer " + properties.token()).getBytes(StandardCharsets.UTF_8) : null;
    }

    /** Runs first: an unauthenticated caller must not reach the body-size filter or a controller. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 10;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (expected == null || !isApi(exchange)) {
            return chain.filter(exchange);
        }
        String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
        if (header == null || !MessageDigest.isEqual(expected, header.getBytes(StandardCharsets.UTF_8))) {
            return Mono.error(ApiProblem.unauthorized());
        }
        return chain.filter(exchange);
    }

    static boolean isApi(ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().pathWithinApplication().value();
        return path.equals(API_PREFIX) || path.startsWith(API_PREFIX + "/");
    }
}
