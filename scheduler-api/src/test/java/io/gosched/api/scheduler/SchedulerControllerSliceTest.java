package io.gosched.api.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.testapp.TestApplication;
import io.gosched.api.testapp.TwoProcRuntime;
import io.gosched.runtime.GoRuntime;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The web slice of scheduler control over a real two-P runtime: what GET shows, what PUT
 * gomaxprocs changes, and each bad input's problem detail naming the field or parameter.
 */
@WebFluxTest
@ContextConfiguration(classes = TestApplication.class)
@Import({SchedulerController.class, ApiExceptionHandler.class, TwoProcRuntime.class})
class SchedulerControllerSliceTest {

    @Autowired
    WebTestClient http;

    @Autowired
    GoRuntime runtime;

    @Test
    void showsTheConfigurationAndAStatsSnapshot() {
        http.get().uri("/api/v1/scheduler").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.config.gomaxprocs").isEqualTo(runtime.gomaxprocs())
                .jsonPath("$.config.preemptQuantumMs").isEqualTo(runtime.config().preemptQuantum().toNanos() / 1e6)
                .jsonPath("$.stats.gomaxprocs").isEqualTo(runtime.gomaxprocs())
                .jsonPath("$.stats.localRunqueues.length()").isEqualTo(runtime.gomaxprocs());
    }

    @Test
    void putGomaxprocsResizesTheRuntimeAndAnswersThePreviousValue() {
        int before = runtime.gomaxprocs();
        try {
            http.put().uri("/api/v1/scheduler/gomaxprocs").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"gomaxprocs\":" + (before + 1) + "}").exchange()
                    .expectStatus().isOk().expectBody()
                    .jsonPath("$.previous").isEqualTo(before)
                    .jsonPath("$.gomaxprocs").isEqualTo(before + 1);
            assertThat(runtime.gomaxprocs()).isEqualTo(before + 1);
        } finally {
            runtime.gomaxprocs(before);
        }
    }

    @Test
    void aGomaxprocsOutOfRangeOrMissingIs422NamingTheField() {
        for (String body : new String[] {"{\"gomaxprocs\":0}", "{\"gomaxprocs\":1025}", "{}"}) {
            http.put().uri("/api/v1/scheduler/gomaxprocs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.errors[0].pointer").isEqualTo("/gomaxprocs");
        }
        http.put().uri("/api/v1/scheduler/gomaxprocs").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"gomaxprocs\":\"x\"}")
                .exchange().expectStatus().isBadRequest()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request")
                .jsonPath("$.errors[0].pointer").isEqualTo("/gomaxprocs");
        assertThat(runtime.gomaxprocs()).as("no bad request changed the runtime").isEqualTo(2);
    }

    @Test
    void schedtraceIsGodebugTextAndABadDetailFlagIs400NamingIt() {
        String text = http.get().uri("/api/v1/scheduler/schedtrace?detail=true").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(text).startsWith("SCHED").contains("gomaxprocs=2").contains("P0:");
        http.get().uri("/api/v1/scheduler/schedtrace?detail=maybe").exchange().expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request")
                .jsonPath("$.parameter").isEqualTo("detail");
    }
}
