package io.gosched.api.security;

import java.net.URI;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Static-token mode ({@code gosched.api.token}): the answers a client sees, as RFC 6750 and RFC
 * 9457 say. The sweep over every operation and path spelling is scheduler-web's
 * {@code StaticTokenSweepTest}; this is the contract of each answer. Over a real server: the
 * firewall must see the request line as a client wrote it.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "gosched.api.token=" + AuthTest.TOKEN)
@AutoConfigureWebTestClient
class AuthTest {

    static final String TOKEN = "s3cret-token-0123456789";

    @Autowired
    WebTestClient http;

    @LocalServerPort
    int port;

    /** The request line exactly as written: WebTestClient would encode a relative URI's % again. */
    URI raw(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Test
    void callsWithoutTheTokenAre401ProblemDetailsWithABareChallenge() {
        for (String uri : new String[] {"/api/v1/jobs", "/api/v1/channels", "/api/v1/scheduler", "/api/v1/workloads", "/api/v1/nothing"}) {
            http.get().uri(uri).exchange().expectStatus().isUnauthorized()
                    .expectHeader().valueEquals("WWW-Authenticate", "Bearer realm=\"gosched\"")
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:unauthorized").jsonPath("$.status").isEqualTo(401)
                    .jsonPath("$.instance").isEqualTo(uri);
        }
        // Not a bearer credential at all: the same as none.
        http.get().uri("/api/v1/jobs").header("Authorization", TOKEN).exchange().expectStatus().isUnauthorized()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:unauthorized");
        http.get().uri("/api/v1/jobs").header("Authorization", "Basic " + TOKEN).exchange().expectStatus().isUnauthorized();
        // Authentication comes first: an anonymous client learns nothing about limits.
        http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"" + "x".repeat(100_000) + "\"}")
                .exchange().expectStatus().isUnauthorized();
    }

    @Test
    void aWrongTokenIs401InvalidToken() {
        for (String token : new String[] {"wrong-token-0123456789", TOKEN + "x", TOKEN.substring(1), "s3cret"}) {
            http.get().uri("/api/v1/jobs").header("Authorization", "Bearer " + token).exchange().expectStatus().isUnauthorized()
                    .expectHeader().valueMatches("WWW-Authenticate", "Bearer realm=\"gosched\", error=\"invalid_token\", error_description=\"[^\"]+\"")
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-token").jsonPath("$.status").isEqualTo(401);
        }
        // Characters outside RFC 6750's token alphabet: Spring's bearer parser refuses it as malformed.
        http.get().uri("/api/v1/jobs").header("Authorization", "Bearer two words").exchange().expectStatus().isUnauthorized()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-token");
    }

    @Test
    void theTokenHoldsEveryScope() {
        String auth = "Bearer " + TOKEN;
        http.get().uri("/api/v1/jobs").header("Authorization", auth).exchange().expectStatus().isOk();
        http.get().uri("/api/v1/channels").header("Authorization", auth).exchange().expectStatus().isOk();
        http.get().uri("/api/v1/scheduler/schedtrace").header("Authorization", auth).exchange().expectStatus().isOk();
        http.put().uri("/api/v1/scheduler/gomaxprocs").header("Authorization", auth).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{}").exchange().expectStatus().isEqualTo(422); // reached the controller, which checks the body
        // The scheme name is case-insensitive (RFC 7235).
        http.get().uri("/api/v1/jobs").header("Authorization", "bearer " + TOKEN).exchange().expectStatus().isOk();
    }

    @Test
    void theDocumentsAndHealthArePublic() {
        // springdoc builds the document on the first request: seconds on a loaded two-core machine.
        WebTestClient patient = http.mutate().responseTimeout(java.time.Duration.ofSeconds(60)).build();
        patient.get().uri("/v3/api-docs").exchange().expectStatus().isOk();
        patient.get().uri("/v3/api-docs.yaml").exchange().expectStatus().isOk();
        http.get().uri("/actuator/health").exchange().expectStatus().isNotFound(); // no actuator in this module; public when present
        http.get().uri("/swagger-ui.html").exchange().expectStatus().is3xxRedirection();
    }

    @Test
    void aPathTheFirewallRefusesIs400BeforeAuthentication() {
        for (String path : new String[] {"/api;a/v1/scheduler", "/api/v1;x=1/scheduler", "/api/v1/%2e%2e/v1/jobs", "//api/v1/jobs",
                "/api/v1%2Fjobs"}) {
            http.get().uri(raw(path)).exchange().expectStatus().isBadRequest()
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:rejected-request")
                    .jsonPath("$.detail").value(d -> org.assertj.core.api.Assertions.assertThat((String) d).startsWith("The request was rejected"));
        }
        // A percent-encoded letter is not refused: it decodes to the protected path, and is protected.
        http.post().uri(raw("/%61pi/v1/jobs")).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"template\":\"ping-pong\",\"params\":{}}").exchange().expectStatus().isUnauthorized();
    }
}
