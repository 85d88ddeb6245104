package io.gosched.web.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Running behind an identity provider: discovery from the issuer alone, and a provider out of reach. */
class JwtIdentityProviderTest {

    static final LocalIdentityProvider IDP = LocalIdentityProvider.start();

    @AfterAll
    static void stop() {
        IDP.close();
    }

    /** Only {@code issuer-uri}: the keys are found through the issuer's OpenID discovery document. */
    @Nested
    @SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
    @AutoConfigureWebTestClient
    class IssuerDiscovery {

        @DynamicPropertySource
        static void issuer(DynamicPropertyRegistry registry) {
            registry.add("spring.security.oauth2.resourceserver.jwt.issuer-uri", IDP::issuer);
        }

        @Autowired
        WebTestClient http;

        @Test
        void aTokenOfTheIssuerIsAccepted() {
            http.get().uri("/api/v1/jobs").headers(h -> h.setBearerAuth(IDP.token(List.of("jobs:read")))).exchange()
                    .expectStatus().isOk();
            http.post().uri("/api/v1/jobs").headers(h -> h.setBearerAuth(IDP.token(List.of("jobs:read"))))
                    .bodyValue("{\"template\":\"ping-pong\",\"params\":{}}").header("Content-Type", "application/json").exchange()
                    .expectStatus().isForbidden()
                    .expectHeader().valueEquals("WWW-Authenticate", "Bearer realm=\"gosched\", error=\"insufficient_scope\", "
                            + "error_description=\"this call needs a token with the scope jobs:write\", scope=\"jobs:write\"")
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:insufficient-scope")
                    .jsonPath("$.scopes[0]").isEqualTo("jobs:write");
            http.post().uri("/api/v1/jobs").headers(h -> h.setBearerAuth(IDP.token(List.of("jobs:write"))))
                    .bodyValue("{\"template\":\"ping-pong\",\"params\":{}}").header("Content-Type", "application/json").exchange()
                    .expectStatus().isAccepted();
        }
    }

    /** The JWK set cannot be fetched: tokens cannot be checked, which is 503, not the client's 401 nor a 500. */
    @Nested
    @SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
    @AutoConfigureWebTestClient
    class ProviderOutOfReach {

        @DynamicPropertySource
        static void nowhere(DynamicPropertyRegistry registry) throws IOException {
            int closed;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                closed = s.getLocalPort(); // free again once closed: nothing listens there
            }
            registry.add("spring.security.oauth2.resourceserver.jwt.jwk-set-uri", () -> "http://127.0.0.1:" + closed + "/jwks");
        }

        @Autowired
        WebTestClient http;

        @Test
        void tokensGet503WithRetryAfter() {
            http.get().uri("/api/v1/jobs").headers(h -> h.setBearerAuth(IDP.token(List.of("jobs:read")))).exchange()
                    .expectStatus().isEqualTo(503)
                    .expectHeader().exists("Retry-After")
                    .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:identity-provider-unavailable");
            // Without a token nothing needs the provider: still the plain 401.
            http.get().uri("/api/v1/jobs").exchange().expectStatus().isUnauthorized();
            http.get().uri("/actuator/health").exchange().expectStatus().isOk();
        }
    }
}
