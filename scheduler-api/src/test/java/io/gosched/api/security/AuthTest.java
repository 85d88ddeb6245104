package io.gosched.api.security;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** With {@code gosched.api.token} set, every /api/v1 call needs the bearer token. */
@SpringBootTest(classes = TestApplication.class, properties = "gosched.api.token=s3cret-token-0123456789")
@AutoConfigureWebTestClient
class AuthTest {

    @Autowired
    WebTestClient http;

    @Test
    void callsWithoutTheTokenAre401ProblemDetails() {
        for (String uri : new String[] {"/api/v1/jobs", "/api/v1/channels", "/api/v1/scheduler", "/api/v1/workloads", "/api/v1/nothing"}) {
            http.get().uri(uri).exchange().expectStatus().isUnauthorized()
                    .expectHeader().valueEquals("WWW-Authenticate", "Bearer realm=\"gosched\"")
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:unauthorized").jsonPath("$.status").isEqualTo(401);
        }
        http.get().uri("/api/v1/jobs").header("Authorization", "Bearer wrong-token-0123456789").exchange().expectStatus().isUnauthorized();
        http.get().uri("/api/v1/jobs").header("Authorization", "s3cret-token-0123456789").exchange().expectStatus().isUnauthorized();
        http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"" + "x".repeat(100_000) + "\"}")
                .exchange().expectStatus().isUnauthorized(); // auth first: an anonymous client learns nothing about limits
    }

    @Test
    void theRightTokenPasses() {
        http.get().uri("/api/v1/jobs").header("Authorization", "Bearer s3cret-token-0123456789").exchange().expectStatus().isOk();
        http.get().uri("/v3/api-docs").exchange().expectStatus().isOk(); // docs stay public
    }
}
