package io.gosched.api.security;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import io.gosched.api.ApiProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.security.oauth2.server.resource.autoconfigure.reactive.JwkSetUriReactiveJwtDecoderBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity.AuthorizeExchangeSpec;
import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authorization.AuthorityReactiveAuthorizationManager;
import org.springframework.security.authorization.AuthorizationDecision;
import org.springframework.security.authorization.AuthorizationResult;
import org.springframework.security.authorization.ReactiveAuthorizationManager;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.core.authority.SimpleGrantedAuthority;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.oauth2.server.resource.authentication.JwtReactiveAuthenticationManager;
import org.springframework.security.oauth2.server.resource.authentication.ReactiveJwtAuthenticationConverter;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authorization.AuthorizationContext;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.firewall.ServerWebExchangeFirewall;
import org.springframework.security.web.server.firewall.StrictServerWebExchangeFirewall;
import org.springframework.security.web.server.savedrequest.NoOpServerRequestCache;
import org.springframework.security.web.server.util.matcher.AndServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.OrServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.PathPatternParserServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.reactive.UrlBasedCorsConfigurationSource;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Authentication and authorization of the service on Spring Security: one
 * {@link SecurityWebFilterChain} whose {@code authorizeExchange} rules come from
 * {@link AccessRules}, Spring's {@link StrictServerWebExchangeFirewall} in front of it, and every
 * refusal written as a problem detail ({@link SecurityProblems}).
 *
 * <p>Runs before Boot's security auto-configurations, whose default chains (everything
 * authenticated, HTTP Basic with a generated password, or JWT on everything) back off when this
 * chain exists; Boot still builds the {@link ReactiveJwtDecoder} from
 * {@code spring.security.oauth2.resourceserver.jwt.*}, and this chain uses it.
 */
@AutoConfiguration(beforeName = {
        "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
        "org.springframework.boot.security.oauth2.server.resource.autoconfigure.reactive.ReactiveOAuth2ResourceServerAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@EnableConfigurationProperties(ApiSecurityProperties.class)
public class ApiSecurityAutoConfiguration {

    private static final Log log = LogFactory.getLog(ApiSecurityAutoConfiguration.class);

    static final String JWT_PREFIX = "spring.security.oauth2.resourceserver.jwt";

    /** Nimbus's default for its blocking JWK source: the set is fetched at most this often. */
    static final Duration JWK_SET_MIN_REFRESH = Duration.ofSeconds(30);

    @Bean
    public AccessRules goschedAccessRules(ApiSecurityProperties properties, Environment env) {
        AccessRules.Paths defaults = AccessRules.Paths.defaults();
        return AccessRules.of(new AccessRules.Paths(
                env.getProperty("management.endpoints.web.base-path", defaults.actuatorBase()),
                env.getProperty("springdoc.api-docs.path", defaults.apiDocs()),
                env.getProperty("springdoc.swagger-ui.path", defaults.swaggerUi()),
                env.getProperty("springdoc.webjars.prefix", defaults.webjars())), properties.prometheusPublic());
    }

    /**
     * Boot builds the JWT decoder from {@code spring.security.oauth2.resourceserver.jwt.*}; its
     * HTTP client fetches the identity provider's keys at most once every 30 s ({@link JwkSetFetchLimit}).
     */
    @Bean
    public JwkSetUriReactiveJwtDecoderBuilderCustomizer goschedJwkSetFetchLimit() {
        return builder -> builder.webClient(WebClient.builder()
                .filter(new JwkSetFetchLimit(JWK_SET_MIN_REFRESH, Clock.systemUTC())).build());
    }

    /**
     * The security filter chain is not observed. With an observation registry present, Spring
     * Security wraps every filter phase, the authorization and the authentication of each request in
     * Micrometer observations, each a timer lookup with its tags: about a fifth of the CPU of a job
     * submission or a channel send in a JFR profile under wrk (bench/results/NOTES.md, "HTTP
     * throughput"), for {@code spring_security_*} timers no dashboard or alert reads. The request
     * itself is still observed ({@code http_server_requests_seconds}), and refusals are counted by
     * the problem handler's own metrics. A deployment that wants the filter timers back declares its
     * own {@link SecurityObservationSettings}.
     */
    @Bean
    @ConditionalOnMissingBean
    public SecurityObservationSettings goschedSecurityObservationSettings() {
        return SecurityObservationSettings.noObservations();
    }

    /** Spring's strict firewall, named here so that nobody swaps it for a lenient one by accident. */
    @Bean
    public ServerWebExchangeFirewall goschedFirewall() {
        return new StrictServerWebExchangeFirewall();
    }

    /** Entry point, access-denied, failure and firewall-rejection handler in one (Spring finds the latter as a bean). */
    @Bean
    SecurityProblems goschedSecurityProblems(AccessRules rules) {
        return new SecurityProblems(rules);
    }

    @Bean
    public SecurityMode goschedSecurityMode(ApiProperties api, ApiSecurityProperties security,
            ObjectProvider<ReactiveJwtDecoder> jwtDecoder, Environment env) {
        return mode(api, security, jwtDecoder.getIfAvailable() != null, env);
    }

    @Bean
    public SecurityWebFilterChain goschedSecurityWebFilterChain(ServerHttpSecurity http, SecurityMode mode, AccessRules rules,
            SecurityProblems problems, ApiProperties api, ApiSecurityProperties security,
            ObjectProvider<ReactiveJwtDecoder> jwtDecoder, ObjectProvider<ReactiveJwtAuthenticationConverter> jwtConverter,
            Environment env) {
        // Stateless: a bearer token on every call, no session, no cookie, hence no CSRF token either.
        http.securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .requestCache(cache -> cache.requestCache(NoOpServerRequestCache.getInstance()))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .exceptionHandling(e -> e.authenticationEntryPoint(problems).accessDeniedHandler(problems));
        if (security.cors().enabled()) {
            http.cors(cors -> cors.configurationSource(corsSource(security.cors())));
        } else {
            http.cors(ServerHttpSecurity.CorsSpec::disable);
        }
        String prefix = env.getProperty(JWT_PREFIX + ".authority-prefix", "SCOPE_");
        switch (mode) {
            case OPEN -> http.authorizeExchange(ex -> ex.anyExchange().permitAll());
            case STATIC_TOKEN -> {
                var everyScope = ApiScope.ALL.stream().map(s -> new SimpleGrantedAuthority(prefix + s.value())).toList();
                var manager = new StaticTokenAuthenticationManager(api.token(), everyScope);
                http.authorizeExchange(ex -> authorize(ex, rules, prefix))
                        .oauth2ResourceServer(rs -> rs.authenticationManagerResolver(exchange -> Mono.just(manager))
                                .authenticationEntryPoint(problems).accessDeniedHandler(problems).authenticationFailureHandler(problems));
            }
            case JWT -> {
                var manager = jwtAuthentication(jwtDecoder.getObject(), jwtConverter.getIfAvailable(ReactiveJwtAuthenticationConverter::new));
                http.authorizeExchange(ex -> authorize(ex, rules, prefix))
                        .oauth2ResourceServer(rs -> rs.jwt(jwt -> jwt.authenticationManager(manager))
                                .authenticationEntryPoint(problems).accessDeniedHandler(problems).authenticationFailureHandler(problems));
            }
        }
        return http.build();
    }

    /**
     * Spring's JWT authentication, except that a failure which is not the token's fault (the JWK
     * set or the issuer's discovery document cannot be fetched: Spring raises an
     * IllegalStateException, not an AuthenticationException) becomes an
     * AuthenticationServiceException, which {@link SecurityProblems} answers with 503, not 500.
     */
    static ReactiveAuthenticationManager jwtAuthentication(ReactiveJwtDecoder decoder, ReactiveJwtAuthenticationConverter converter) {
        JwtReactiveAuthenticationManager jwt = new JwtReactiveAuthenticationManager(decoder);
        jwt.setJwtAuthenticationConverter(converter);
        return authentication -> jwt.authenticate(authentication).onErrorMap(e -> !(e instanceof AuthenticationException),
                e -> new AuthenticationServiceException("cannot check the token: " + e.getMessage(), e));
    }

    /** The table as {@code authorizeExchange} rules, in its order; what no rule covers needs authentication. */
    private static void authorize(AuthorizeExchangeSpec ex, AccessRules rules, String authorityPrefix) {
        for (AccessRules.Rule rule : rules.rules()) {
            ServerWebExchangeMatcher paths = new OrServerWebExchangeMatcher(rule.patterns().stream()
                    .map(p -> (ServerWebExchangeMatcher) new PathPatternParserServerWebExchangeMatcher(p)).toList());
            for (AccessRules.MethodKind kind : AccessRules.MethodKind.values()) {
                ServerWebExchangeMatcher methods = exchange -> AccessRules.MethodKind.of(exchange.getRequest().getMethod()) == kind
                        ? ServerWebExchangeMatcher.MatchResult.match() : ServerWebExchangeMatcher.MatchResult.notMatch();
                grant(ex.matchers(new AndServerWebExchangeMatcher(paths, methods)), rule.access(kind), authorityPrefix);
            }
        }
        ex.anyExchange().authenticated();
    }

    private static void grant(AuthorizeExchangeSpec.Access to, AccessRules.Access access, String authorityPrefix) {
        switch (access.kind()) {
            case PUBLIC -> to.permitAll();
            case AUTHENTICATED -> to.authenticated();
            case SCOPE -> {
                // One scope of every set: hasAnyAuthority per set, all of them granted.
                List<ReactiveAuthorizationManager<AuthorizationContext>> each = access.allOf().stream()
                        .map(set -> AuthorityReactiveAuthorizationManager.<AuthorizationContext>hasAnyAuthority(
                                set.stream().sorted().map(s -> authorityPrefix + s.value()).toArray(String[]::new)))
                        .map(m -> (ReactiveAuthorizationManager<AuthorizationContext>) m).toList();
                to.access(each.size() == 1 ? each.getFirst() : (authentication, context) -> Flux.fromIterable(each)
                        .concatMap(m -> m.authorize(authentication, context))
                        .all(AuthorizationResult::isGranted)
                        .map(AuthorizationDecision::new));
            }
        }
    }

    private static UrlBasedCorsConfigurationSource corsSource(ApiSecurityProperties.Cors cors) {
        CorsConfiguration c = new CorsConfiguration();
        c.setAllowedOrigins(cors.allowedOrigins());
        c.setAllowedMethods(cors.allowedMethods());
        c.setAllowedHeaders(cors.allowedHeaders());
        c.setExposedHeaders(cors.exposedHeaders());
        c.setAllowCredentials(false);
        c.setMaxAge(cors.maxAge());
        UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
        source.registerCorsConfiguration("/**", c);
        return source;
    }

    /**
     * The mode the properties ask for, or a start-up failure naming the property at fault: both
     * a static token and JWTs, opaque tokens (not supported), or a protected Prometheus endpoint
     * with no way to authenticate.
     */
    static SecurityMode mode(ApiProperties api, ApiSecurityProperties security, boolean jwtDecoder, Environment env) {
        String introspection = "spring.security.oauth2.resourceserver.opaquetoken.introspection-uri";
        if (env.containsProperty(introspection)) {
            throw new InvalidConfigurationPropertyValueException(introspection, env.getProperty(introspection),
                    "opaque tokens are not supported; configure JWTs with " + JWT_PREFIX + ".issuer-uri or " + JWT_PREFIX + ".jwk-set-uri");
        }
        if (api.authEnabled() && jwtDecoder) {
            throw new InvalidConfigurationPropertyValueException("gosched.api.token", "(hidden)",
                    "set either gosched.api.token (a static token) or " + JWT_PREFIX + ".* (JWTs from an identity provider), not both");
        }
        SecurityMode mode = api.authEnabled() ? SecurityMode.STATIC_TOKEN : jwtDecoder ? SecurityMode.JWT : SecurityMode.OPEN;
        if (mode == SecurityMode.OPEN && !security.prometheusPublic()) {
            throw new InvalidConfigurationPropertyValueException("gosched.api.security.prometheus-public", "false",
                    "a protected /actuator/prometheus needs credentials: set gosched.api.token or " + JWT_PREFIX + ".issuer-uri");
        }
        switch (mode) {
            case OPEN -> log.warn("authentication is off: anyone who reaches this service may run jobs, use channels and change "
                    + "GOMAXPROCS; set gosched.api.token or " + JWT_PREFIX + ".issuer-uri (see the README's Security section)");
            case STATIC_TOKEN -> log.info("authentication: the static token of gosched.api.token (every scope)");
            case JWT -> {
                log.info("authentication: JWTs (" + JWT_PREFIX + "), scopes " + List.copyOf(ApiScope.ALL));
                if (!env.containsProperty(JWT_PREFIX + ".audiences") && !env.containsProperty(JWT_PREFIX + ".audiences[0]")) {
                    log.warn(JWT_PREFIX + ".audiences is not set: a token the identity provider issued for another service "
                            + "is accepted here too if it carries these scopes");
                }
            }
        }
        return mode;
    }
}
