package io.gosched.api.security;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/** CORS is closed unless origins are listed; a listed origin gets preflights answered without a token. Over a real server, as a browser sees it. */
class CorsTest {

    static final String TOKEN = "cors-token-0123456789";

    @Nested
    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = "gosched.api.token=" + TOKEN)
    @AutoConfigureWebTestClient
    class ClosedByDefault {

        @Autowired
        WebTestClient http;

        @Test
        void noOriginIsAllowed() {
            http.options().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://app.example")
                    .header(HttpHeaders.ACCESS_CONTROL_REQUEST_METHOD, "POST").exchange()
                    .expectHeader().doesNotExist(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN);
            http.get().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://app.example")
                    .header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).exchange()
                    .expectStatus().isOk()
                    .expectHeader().doesNotExist(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN);
        }
    }

    @Nested
    @SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
            properties = {"gosched.api.token=" + TOKEN,
            "gosched.api.security.cors.allowed-origins=https://app.example"})
    @AutoConfigureWebTestClient
    class ListedOrigins {

        @Autowired
        WebTestClient http;

        @Test
        void aListedOriginsPreflightIsAnsweredWithoutAToken() {
            http.options().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://app.example")
                    .header(HttpHeaders.ACCESS_CONTROL_REQUEST_METHOD, "POST")
                    .header(HttpHeaders.ACCESS_CONTROL_REQUEST_HEADERS, "authorization, content-type").exchange()
                    .expectStatus().isOk()
                    .expectHeader().valueEquals(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN, "https://app.example")
                    .expectHeader().value(HttpHeaders.ACCESS_CONTROL_ALLOW_METHODS, m -> org.assertj.core.api.Assertions.assertThat(m).contains("POST"))
                    .expectHeader().value(HttpHeaders.ACCESS_CONTROL_ALLOW_HEADERS,
                            h -> org.assertj.core.api.Assertions.assertThat(h.toLowerCase()).contains("authorization"))
                    .expectHeader().doesNotExist(HttpHeaders.ACCESS_CONTROL_ALLOW_CREDENTIALS);
        }

        @Test
        void theCallItselfStillNeedsTheTokenAndExposesItsHeaders() {
            http.get().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://app.example").exchange()
                    .expectStatus().isUnauthorized()
                    .expectHeader().valueEquals(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN, "https://app.example");
            http.get().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://app.example")
                    .header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKEN).exchange()
                    .expectStatus().isOk()
                    .expectHeader().valueEquals(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN, "https://app.example")
                    .expectHeader().value(HttpHeaders.ACCESS_CONTROL_EXPOSE_HEADERS,
                            h -> org.assertj.core.api.Assertions.assertThat(h).contains("Location", "WWW-Authenticate"));
        }

        @Test
        void anotherOriginIsRefused() {
            http.options().uri("/api/v1/jobs").header(HttpHeaders.ORIGIN, "https://evil.example")
                    .header(HttpHeaders.ACCESS_CONTROL_REQUEST_METHOD, "POST").exchange()
                    .expectStatus().isForbidden()
                    .expectHeader().doesNotExist(HttpHeaders.ACCESS_CONTROL_ALLOW_ORIGIN);
        }
    }
}
