package io.gosched.api.security;

import java.util.List;
import java.util.Set;

import io.gosched.api.security.AccessRules.Access;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which scope each path needs: the policy, pinned here by hand (the sweeps check that the chain
 * enforces what the table says; this checks that the table says what we mean).
 */
class AccessRulesTest {

    final AccessRules rules = AccessRules.of(AccessRules.Paths.defaults(), true);

    @ParameterizedTest(name = "{0} {1} needs {2}")
    @CsvSource({
            "GET,    /api/v1/jobs,                    jobs:read",
            "HEAD,   /api/v1/jobs,                    jobs:read",
            "POST,   /api/v1/jobs,                    jobs:write",
            "GET,    /api/v1/jobs/7/events,           jobs:read",
            "GET,    /api/v1/jobs/7/goroutines,       jobs:read",
            "DELETE, /api/v1/jobs/7,                  jobs:write",
            "POST,   /api/v1/jobs/7/retry,            jobs:write",
            "GET,    /api/v1/workloads,               jobs:read",
            "GET,    /api/v1/channels/c,              channels:read",
            "POST,   /api/v1/channels/c/recv,         channels:write",
            "DELETE, /api/v1/channels/c,              channels:write",
            "PUT,    /api/v1/scheduler/gomaxprocs,    scheduler:admin",
            "GET,    /api/v1/scheduler/schedtrace,    scheduler:admin",
            "GET,    /api/v1/scheduler/goroutines,    scheduler:admin",
            "GET,    /api/v1/trace,                   scheduler:admin",
            "GET,    /api/v1/trace/flight-recorder,   scheduler:admin",
            "GET,    /api/v1/trace/flight,            scheduler:admin",
            "GET,    /api/v1/trace/flight/snapshots/1, scheduler:admin",
            "POST,   /api/v1/trace/flight-recorder,   scheduler:admin",
            "GET,    /api/v1/debug/goroutines,        scheduler:admin",
            "GET,    /api/v1/debug/pprof/heap,        scheduler:admin",
            "PUT,    /api/v1/scheduler,               scheduler:admin",
            "GET,    /actuator/metrics,               scheduler:admin",
            "GET,    /actuator/env,                   scheduler:admin"})
    void oneScope(String method, String path, String scope) {
        // By a rule of its own or its prefix's, not by the catch-all (which would give admin to anything).
        assertThat(rules.ruleFor(org.springframework.http.server.PathContainer.parsePath(path)).orElseThrow().unclassified())
                .as("%s is covered by a deliberate rule", path).isFalse();
        Access a = rules.accessFor(HttpMethod.valueOf(method), path);
        assertThat(a.kind()).isEqualTo(Access.Kind.SCOPE);
        assertThat(a.allOf()).hasSize(1);
        assertThat(a.allOf().getFirst()).extracting(ApiScope::value).containsExactly(scope);
    }

    /** The scheduler's statistics (what /actuator/prometheus shows anyway): any scope of the service. */
    @ParameterizedTest
    @CsvSource({"GET, /api/v1/scheduler", "GET, /api/v1/telemetry/stream", "HEAD, /api/v1/telemetry/stream"})
    void anyScope(String method, String path) {
        Access a = rules.accessFor(HttpMethod.valueOf(method), path);
        assertThat(a.allOf()).containsExactly(ApiScope.ALL);
    }

    @ParameterizedTest
    @CsvSource({"/actuator/health", "/actuator/health/readiness", "/actuator/prometheus", "/v3/api-docs", "/v3/api-docs/swagger-config",
            "/v3/api-docs.yaml", "/swagger-ui.html", "/swagger-ui/index.html", "/webjars/swagger-ui/index.html", "/", "/index.html",
            "/app.js", "/app.css", "/favicon.ico"})
    void publicReads(String path) {
        assertThat(rules.accessFor(HttpMethod.GET, path)).isEqualTo(Access.PUBLIC);
        assertThat(rules.accessFor(HttpMethod.HEAD, path)).isEqualTo(Access.PUBLIC);
        assertThat(rules.accessFor(HttpMethod.POST, path)).isEqualTo(Access.AUTHENTICATED);
    }

    @Test
    void optionsNeedsEveryMethodsScope() {
        Access a = rules.accessFor(HttpMethod.OPTIONS, "/api/v1/jobs");
        assertThat(a.allOf()).containsExactly(Set.of(ApiScope.JOBS_READ), Set.of(ApiScope.JOBS_WRITE));
        assertThat(a.allows(Set.of(ApiScope.JOBS_READ))).isFalse();
        assertThat(a.allows(Set.of(ApiScope.JOBS_READ, ApiScope.JOBS_WRITE))).isTrue();
        assertThat(rules.accessFor(HttpMethod.OPTIONS, "/api/v1/scheduler").allOf())
                .containsExactly(ApiScope.ALL, Set.of(ApiScope.SCHEDULER_ADMIN));
        assertThat(rules.accessFor(HttpMethod.OPTIONS, "/actuator/health")).isEqualTo(Access.AUTHENTICATED);
    }

    @Test
    void pathsNoRuleNamesNeedAuthenticationAndTheApiCatchAllNeedsAdmin() {
        assertThat(rules.accessFor(HttpMethod.GET, "/API/v1/jobs")).isEqualTo(Access.AUTHENTICATED);
        assertThat(rules.accessFor(HttpMethod.GET, "/anything")).isEqualTo(Access.AUTHENTICATED);
        var catchAll = rules.ruleFor(org.springframework.http.server.PathContainer.parsePath("/api/v2/jobs")).orElseThrow();
        assertThat(catchAll.unclassified()).isTrue();
        assertThat(catchAll.read().allOf()).containsExactly(Set.of(ApiScope.SCHEDULER_ADMIN));
        assertThat(rules.ruleFor(org.springframework.http.server.PathContainer.parsePath("/api/v1/jobs")).orElseThrow().unclassified())
                .isFalse();
    }

    /** The rules match as the router does: on the decoded path, without ; parameters. */
    @Test
    void theRulesSeeThePathAsTheRouterDoes() {
        var parsed = org.springframework.http.server.RequestPath.parse("/%61pi/v1/%73cheduler/gomaxprocs", null);
        assertThat(rules.accessFor(HttpMethod.PUT, parsed.pathWithinApplication()).allOf())
                .containsExactly(Set.of(ApiScope.SCHEDULER_ADMIN));
        var params = org.springframework.http.server.RequestPath.parse("/api;a/v1;b=1/scheduler/gomaxprocs", null);
        assertThat(rules.accessFor(HttpMethod.PUT, params.pathWithinApplication()).allOf())
                .containsExactly(Set.of(ApiScope.SCHEDULER_ADMIN));
    }

    @Test
    void prometheusCanBeProtectedAndPathsFollowTheirProperties() {
        AccessRules closed = AccessRules.of(new AccessRules.Paths("/manage/", "/docs", "/ui.html", "/wj"), false);
        assertThat(closed.accessFor(HttpMethod.GET, "/manage/prometheus").allOf()).containsExactly(ApiScope.ALL);
        assertThat(closed.accessFor(HttpMethod.GET, "/manage/health")).isEqualTo(Access.PUBLIC);
        assertThat(closed.accessFor(HttpMethod.GET, "/docs/swagger-config")).isEqualTo(Access.PUBLIC);
        assertThat(closed.accessFor(HttpMethod.GET, "/v3/api-docs")).isEqualTo(Access.AUTHENTICATED);
        assertThat(closed.accessFor(HttpMethod.GET, "/manage/env").allOf()).containsExactly(Set.of(ApiScope.SCHEDULER_ADMIN));
        assertThat(List.of(ApiScope.values())).extracting(ApiScope::value)
                .containsExactly("jobs:read", "jobs:write", "channels:read", "channels:write", "scheduler:admin");
    }
}
