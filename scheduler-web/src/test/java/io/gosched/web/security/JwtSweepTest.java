package io.gosched.web.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.security.ApiScope;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * JWT mode against a real identity provider on loopback (RSA keys, Nimbus-signed RS256 tokens, a
 * JWK set the service fetches over HTTP), every operation of the served OpenAPI document: tokens
 * that are not valid get 401, a valid token without the operation's scope gets 403 on every
 * spelling of the path, and each scope the document names for an operation is enough on its own.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ControllerCalls.Recorder.class)
class JwtSweepTest {

    static final LocalIdentityProvider IDP = LocalIdentityProvider.start();
    static final List<String> ALL = ApiScope.ALL.stream().map(ApiScope::value).toList();

    @DynamicPropertySource
    static void identityProvider(DynamicPropertyRegistry registry) {
        registry.add("spring.security.oauth2.resourceserver.jwt.jwk-set-uri", IDP::jwkSetUri);
        registry.add("spring.security.oauth2.resourceserver.jwt.issuer-uri", IDP::issuer);
        registry.add("spring.security.oauth2.resourceserver.jwt.audiences", () -> LocalIdentityProvider.AUDIENCE);
    }

    @AfterAll
    static void stop() {
        IDP.close();
    }

    @LocalServerPort
    int port;

    @Autowired
    ControllerCalls calls;

    static EndpointSweep.Credential bearer(String label, String token) {
        return new EndpointSweep.Credential(label, "Bearer " + token);
    }

    @Test
    void tokensThatAreNotValidGet401OnEveryOperation() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        List<EndpointSweep.Operation> ops = sweep.operations();
        assertThat(ops).hasSizeGreaterThanOrEqualTo(20);
        List<EndpointSweep.Credential> invalid = List.of(
                bearer("with a token that is no JWT", "not-a-jwt"),
                bearer("with a JWT signed by another key", IDP.tokenSignedByAnotherKey(ALL)),
                bearer("with an expired JWT", IDP.token(ALL, c -> c.expirationTime(new Date(System.currentTimeMillis() - 120_000))
                        .issueTime(new Date(System.currentTimeMillis() - 600_000)))),
                bearer("with a JWT of another issuer", IDP.token(ALL, c -> c.issuer("http://127.0.0.1:1/realms/other"))),
                bearer("with a JWT for another audience", IDP.token(ALL, c -> c.audience("another-service"))),
                bearer("with an unsigned JWT", unsigned(IDP.token(ALL))));
        List<String> failures = new ArrayList<>();
        for (EndpointSweep.Operation op : ops) {
            failures.addAll(sweep.refusals(op, new EndpointSweep.Credential("without credentials", null),
                    401, "urn:gosched:problem:unauthorized", true));
            for (EndpointSweep.Credential c : invalid) {
                failures.addAll(sweep.refusals(op, c, 401, "urn:gosched:problem:invalid-token", true, false));
            }
        }
        assertThat(failures).as("requests that were not refused").isEmpty();
        assertThat(IDP.jwksRequests()).as("the service fetched the JWK set over HTTP").isPositive();
    }

    @Test
    void aTokenWithoutTheOperationsScopeGets403OnEverySpellingOfItsPath() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        List<String> failures = new ArrayList<>();
        String noScopeOfOurs = IDP.token(List.of("openid", "profile"));
        for (EndpointSweep.Operation op : sweep.operations()) {
            assertThat(op.scopeAlternatives()).as("%s names its scopes", op).isNotEmpty();
            Set<String> enough = new HashSet<>();
            op.scopeAlternatives().forEach(enough::addAll);
            List<String> others = ALL.stream().filter(s -> !enough.contains(s)).toList();
            if (!others.isEmpty()) {
                failures.addAll(sweep.refusals(op, bearer("with " + others, IDP.token(others)), 403,
                        "urn:gosched:problem:insufficient-scope", false));
            }
            failures.addAll(sweep.refusals(op, bearer("with no scope of the service", noScopeOfOurs), 403,
                    "urn:gosched:problem:insufficient-scope", true));
            EndpointSweep.Response r = sweep.send(op.method(), op.path(), "Bearer " + IDP.token(others), op.body());
            String challenge = r.headers().getOrDefault("www-authenticate", "");
            if (!challenge.contains("error=\"insufficient_scope\"")
                    || (op.scopeAlternatives().size() == 1 && !challenge.contains("scope=\"" + op.scopeAlternatives().getFirst().getFirst() + "\""))) {
                failures.add(op + ": challenge " + challenge + " does not say insufficient_scope and the scope");
            }
            calls.drain();
        }
        assertThat(failures).as("requests that were not refused").isEmpty();
    }

    @Test
    void eachScopeTheDocumentNamesIsEnoughOnItsOwn() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        List<String> failures = new ArrayList<>();
        for (EndpointSweep.Operation op : sweep.operations()) {
            for (List<String> scopes : op.scopeAlternatives()) {
                failures.addAll(sweep.reaches(op, bearer("a JWT with " + scopes, IDP.token(scopes))));
            }
        }
        assertThat(failures).isEmpty();
    }

    /**
     * The rules are path patterns, so endpoints that do not exist yet already have their scope: a
     * reader of jobs reaches a job's goroutines (404 until the endpoint exists), and only
     * scheduler:admin reaches anything under /api/v1/debug or /api/v1/trace.
     */
    @Test
    void endpointsAddedLaterFallUnderTheirPrefixsScope() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        String jobsReader = "Bearer " + IDP.token(List.of("jobs:read"));
        String everythingButAdmin = "Bearer " + IDP.token(List.of("jobs:read", "jobs:write", "channels:read", "channels:write"));
        String admin = "Bearer " + IDP.token(List.of("scheduler:admin"));
        assertThat(sweep.send("GET", "/api/v1/jobs/x0/goroutines", jobsReader, false).status()).isEqualTo(404);
        assertThat(sweep.send("GET", "/api/v1/jobs/x0/goroutines", admin, false).status()).isEqualTo(403);
        // Served since issue 13: admin only.
        assertThat(sweep.send("GET", "/api/v1/debug/goroutines", everythingButAdmin, false).status()).isEqualTo(403);
        assertThat(sweep.send("GET", "/api/v1/debug/goroutines", admin, false).status()).isEqualTo(200);
        // Only the two allowed calls reached a handler (the unknown job answers 404 from its handler).
        assertThat(calls.drain()).extracting(c -> c.handler())
                .containsExactly("GoroutineController.jobGoroutines", "GoroutineController.goroutines");
        for (String path : List.of("/api/v1/debug/not-yet", "/api/v1/debug/pprof/heap", "/api/v1/trace/flight-recorder",
                "/api/v1/scheduler/goroutines", "/api/v1/something-new")) {
            assertThat(sweep.send("GET", path, everythingButAdmin, false).status()).as(path).isEqualTo(403);
            assertThat(sweep.send("POST", path, everythingButAdmin, true).status()).as(path).isEqualTo(403);
            assertThat(sweep.send("GET", path, admin, false).status()).as(path).isEqualTo(404);
        }
        assertThat(calls.drain()).isEmpty();
    }

    /**
     * A client inventing key ids cannot make each of its requests a call to the identity provider:
     * the JWK set is fetched at most once per 30 s, and such tokens are refused from it at once.
     */
    @Test
    void inventedKeyIdsDoNotMakeEachRequestAFetchOfTheKeys() throws Exception {
        EndpointSweep sweep = new EndpointSweep(port, calls);
        assertThat(sweep.send("GET", "/api/v1/jobs", "Bearer " + IDP.token(List.of("jobs:read")), false).status()).isEqualTo(200);
        calls.drain(); // that one was meant to get through: the keys are fetched and cached now
        int before = IDP.jwksRequests();
        for (int i = 0; i < 30; i++) {
            EndpointSweep.Response r = sweep.send("GET", "/api/v1/jobs", "Bearer " + IDP.tokenWithUnknownKeyId(List.of("jobs:read")), false);
            assertThat(r.status()).isEqualTo(401);
            assertThat(r.body()).contains("urn:gosched:problem:invalid-token");
        }
        // One refresh may fall due during the loop; without the limit it would be 30.
        assertThat(IDP.jwksRequests() - before).as("JWK set fetches for 30 tokens with unknown key ids").isLessThanOrEqualTo(1);
        assertThat(calls.drain()).isEmpty();
    }

    /** The same claims with {@code alg: none} and no signature. */
    static String unsigned(String jwt) {
        String[] parts = jwt.split("\\.");
        String header = java.util.Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"alg\":\"none\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return header + "." + parts[1] + ".";
    }
}
