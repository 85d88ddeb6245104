package io.gosched.api.job;

import io.gosched.service.job.JobService;

import io.gosched.service.error.RefusedException;

import io.gosched.service.error.ShuttingDownException;

import java.time.Duration;

import io.gosched.service.ServiceProperties;
import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.isNull;
import static org.mockito.Mockito.when;

/**
 * The web slice of the job controller with the service mocked: how overload and shutdown
 * reach the client (429 with Retry-After, 503), which the real service only produces under
 * conditions that are slow to build through HTTP.
 */
@WebFluxTest
@ContextConfiguration(classes = TestApplication.class)
@Import({JobController.class, ApiExceptionHandler.class})
@EnableConfigurationProperties(ServiceProperties.class)
class JobControllerSliceTest {

    @Autowired
    WebTestClient http;

    @MockitoBean
    JobService jobs;

    @Test
    void overloadIs429WithRetryAfter() {
        when(jobs.submit(any(), isNull())).thenThrow(new RefusedException(RefusedException.Reason.OVERLOADED, "the queue is full", Duration.ofMillis(2500)));
        http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{}").exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("Retry-After", "3")
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:overloaded").jsonPath("$.retryAfterSeconds").isEqualTo(3);
    }

    @Test
    void shuttingDownIs503() {
        when(jobs.submit(any(), isNull())).thenThrow(new ShuttingDownException());
        http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{}").exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().exists("Retry-After")
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:shutting-down");
    }

    @Test
    void anUnexpectedFailureIsABare500WithoutDetails() {
        when(jobs.get("x")).thenThrow(new IllegalStateException("secret internal state"));
        http.get().uri("/api/v1/jobs/x").exchange()
                .expectStatus().isEqualTo(500)
                .expectBody(String.class).value(body -> org.assertj.core.api.Assertions.assertThat(body)
                        .contains("urn:gosched:problem:internal").doesNotContain("secret").doesNotContain("IllegalState"));
    }
}
