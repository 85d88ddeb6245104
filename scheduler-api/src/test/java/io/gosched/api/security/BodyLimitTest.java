package io.gosched.api.security;

import java.net.URI;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.BodyInserters;

/**
 * The body limit cannot be walked around by spelling the path another way: it applies to every
 * request (the router decodes {@code /%61pi/v1/jobs} to {@code /api/v1/jobs}; a limit keyed on
 * the raw path would have let 70 KB through to the JSON decoder).
 */
@SpringBootTest(classes = TestApplication.class)
@AutoConfigureWebTestClient
class BodyLimitTest {

    @Autowired
    WebTestClient http;

    @ParameterizedTest
    @ValueSource(strings = {"/api/v1/jobs", "/%61pi/v1/jobs", "/api/%76%31/jobs", "/api/v1/%6Aobs"})
    void aBodyOverTheLimitIs413WhateverThePath(String raw) {
        http.post().uri(URI.create(raw)).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"name\":\"" + "x".repeat(70_000) + "\"}").exchange()
                .expectStatus().isEqualTo(413)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:payload-too-large").jsonPath("$.limit").isEqualTo(65536);
        http.post().uri(URI.create(raw)).contentType(MediaType.APPLICATION_JSON) // chunked: no Content-Length
                .body(BodyInserters.fromPublisher(Flux.range(0, 100).map(i -> i == 0 ? "{\"name\":\"" : "x".repeat(1000)), String.class))
                .exchange()
                .expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.limit").isEqualTo(65536);
    }
}
