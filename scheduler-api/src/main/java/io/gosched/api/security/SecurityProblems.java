package io.gosched.api.security;

import java.util.List;

import io.gosched.api.error.ApiProblem;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.oauth2.core.OAuth2AuthenticationException;
import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.server.resource.BearerTokenError;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import org.springframework.security.web.server.WebFilterExchange;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedException;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler;
import org.springframework.web.server.ServerWebExchange;

/**
 * Every refusal of the security filter chain as an {@link ApiProblem}, so that the one problem
 * handler ({@code ProblemErrorWebExceptionHandler}) writes it like every other error: RFC 9457
 * body, {@code urn:gosched:problem:<kind>} type, and the RFC 6750 {@code WWW-Authenticate}
 * challenge for 401 and 403.
 *
 * <ul>
 *   <li>no credentials: 401 {@code unauthorized}, challenge without an error code;</li>
 *   <li>a token that is not valid: 401 {@code invalid-token}, {@code error="invalid_token"};</li>
 *   <li>a malformed bearer request: 400 {@code malformed-request}, {@code error="invalid_request"};</li>
 *   <li>a valid token without the scope: 403 {@code insufficient-scope}, {@code error="insufficient_scope"};</li>
 *   <li>the identity provider's keys out of reach: 503 {@code identity-provider-unavailable};</li>
 *   <li>a URL or method the firewall refuses: 400 {@code rejected-request}.</li>
 * </ul>
 */
final class SecurityProblems implements ServerAuthenticationEntryPoint, ServerAuthenticationFailureHandler,
        ServerAccessDeniedHandler, ServerExchangeRejectedHandler {

    private static final Log log = LogFactory.getLog(SecurityProblems.class);

    private final AccessRules rules;

    SecurityProblems(AccessRules rules) {
        this.rules = rules;
    }

    /** No authentication, or authentication that failed: 401 (400, 503 for the cases above). */
    @Override
    public Mono<Void> commence(ServerWebExchange exchange, AuthenticationException ex) {
        return Mono.error(problem(ex));
    }

    @Override
    public Mono<Void> onAuthenticationFailure(WebFilterExchange exchange, AuthenticationException ex) {
        return Mono.error(problem(ex));
    }

    /** An authenticated caller the rules refuse: 403 naming the scopes the call needs. */
    @Override
    public Mono<Void> handle(ServerWebExchange exchange, AccessDeniedException denied) {
        AccessRules.Access access = rules.accessFor(exchange.getRequest().getMethod(),
                exchange.getRequest().getPath().pathWithinApplication());
        return Mono.error(ApiProblem.insufficientScope(
                access.allOf().stream().map(set -> set.stream().sorted().map(ApiScope::value).toList()).toList()));
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, ServerExchangeRejectedException ex) {
        if (log.isDebugEnabled()) {
            log.debug("firewall rejected " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getURI() + ": "
                    + ex.getMessage());
        }
        return Mono.error(ApiProblem.rejectedRequest(ex.getMessage()));
    }

    static ApiProblem problem(AuthenticationException ex) {
        if (ex instanceof AuthenticationServiceException) {
            // Spring raises this when the JWK set cannot be fetched: not the client's fault, and it may pass.
            log.warn("cannot check a bearer token: " + ex.getMessage());
            return ApiProblem.identityProviderUnavailable();
        }
        if (ex instanceof OAuth2AuthenticationException o) {
            OAuth2Error error = o.getError();
            String description = error.getDescription() != null ? error.getDescription() : "the bearer token is not valid";
            HttpStatus status = error instanceof BearerTokenError b ? b.getHttpStatus() : HttpStatus.UNAUTHORIZED;
            if (status == HttpStatus.BAD_REQUEST) {
                return ApiProblem.malformedAuthorization(description);
            }
            if (status == HttpStatus.FORBIDDEN) {
                return ApiProblem.insufficientScope(List.of());
            }
            return ApiProblem.invalidToken(description);
        }
        return ApiProblem.unauthorized();
    }
}
