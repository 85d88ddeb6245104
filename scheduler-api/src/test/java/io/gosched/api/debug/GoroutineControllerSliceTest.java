package io.gosched.api.debug;

import io.gosched.service.error.NotFoundException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.when;

import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.error.WireEnums;
import io.gosched.service.job.JobService;
import io.gosched.api.testapp.TestApplication;
import io.gosched.api.testapp.TwoProcRuntime;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.gosched.testing.Await;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * The web slice of goroutine dumps over a real runtime holding a known set of parked goroutines:
 * each filter selects exactly its goroutines, {@code limit} truncates and says so, and
 * {@code format=text} is Go's traceback text. The job service is a mock: only its 404 matters here.
 */
@WebFluxTest
@ContextConfiguration(classes = TestApplication.class)
@Import({GoroutineController.class, ApiExceptionHandler.class, WireEnums.Formatters.class, TwoProcRuntime.class})
class GoroutineControllerSliceTest {

    @Autowired
    WebTestClient http;

    @Autowired
    GoRuntime runtime;

    @MockitoBean
    JobService jobs;

    /** Closed after each test: every goroutine parked on it returns. */
    private final Chan<Object> gate = Chan.make(0);

    /** Three goroutines labelled team=a (one also job=j1), two labelled team=b, all parked on the gate. */
    @BeforeEach
    void parkFive() {
        park(Map.of("team", "a", "job", "j1"));
        park(Map.of("team", "a"));
        park(Map.of("team", "a"));
        park(Map.of("team", "b"));
        park(Map.of("team", "b"));
        Await.until("five labelled goroutines parked", Duration.ofSeconds(10),
                () -> runtime.goroutines().stream().filter(g -> g.labels().containsKey("team"))
                        .filter(g -> g.state().equals("waiting")).count() == 5);
    }

    private void park(Map<String, String> labels) {
        runtime.go(() -> Go.withLabels(labels, gate::recv));
    }

    @AfterEach
    void release() {
        gate.close();
        Await.until("the labelled goroutines returned", Duration.ofSeconds(10),
                () -> runtime.goroutines().stream().noneMatch(g -> g.labels().containsKey("team")));
    }

    private JsonNode dump(String query) {
        return http.get().uri("/api/v1/debug/goroutines?" + query).exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    @Test
    void aLabelFilterSelectsExactlyItsGoroutinesWithTheirWait() {
        JsonNode b = dump("label=team:b&state=waiting");
        assertThat(b.get("total").asInt()).isEqualTo(2);
        assertThat(b.get("truncated").asBoolean()).isFalse();
        for (JsonNode g : b.get("goroutines")) {
            assertThat(g.get("labels").get("team").asString()).isEqualTo("b");
            assertThat(g.get("state").asString()).isEqualTo("waiting");
            assertThat(g.get("waitReason").asString()).isEqualTo("chan receive");
            assertThat(g.get("stack").isEmpty()).as("a parked goroutine shows where it waits").isFalse();
        }
        assertThat(dump("job=j1").get("total").asInt()).isEqualTo(1);
        assertThat(dump("label=team:c").get("total").asInt()).isZero();
    }

    @Test
    void aLimitBelowTheMatchesTruncatesAndCountsThemAll() {
        JsonNode a = dump("label=team:a&limit=2");
        assertThat(a.get("total").asInt()).isEqualTo(3);
        assertThat(a.get("truncated").asBoolean()).isTrue();
        assertThat(a.get("goroutines")).hasSize(2);
        assertThat(dump("label=team:a&limit=3").get("truncated").asBoolean()).isFalse();
    }

    @Test
    void formatTextIsGosTracebackOfTheSelectedGoroutines() {
        String text = http.get().uri("/api/v1/debug/goroutines?format=text&label=team:b").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
                .expectBody(String.class).returnResult().getResponseBody();
        long headers = runtime.goroutines().stream().filter(g -> "b".equals(g.labels().get("team"))).count();
        assertThat(text.lines().filter(l -> l.matches("goroutine \\d+ \\[chan receive.*\\]:"))).hasSize((int) headers).hasSize(2);
    }

    @Test
    void aJobsGoroutinesAreThoseLabelledWithItsIdAndAnUnknownJobIs404() {
        JsonNode j = http.get().uri("/api/v1/jobs/j1/goroutines").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(j.get("job").asString()).isEqualTo("j1");
        assertThat(j.get("total").asInt()).isEqualTo(1);
        assertThat(j.get("goroutines").get(0).get("labels").get("job").asString()).isEqualTo("j1");

        when(jobs.get("j2")).thenThrow(new NotFoundException("job", "j2"));
        http.get().uri("/api/v1/jobs/j2/goroutines").exchange().expectStatus().isNotFound()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:not-found");
        http.get().uri("/api/v1/jobs/j1/goroutines?limit=0").exchange().expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors[0].pointer").isEqualTo("/limit");
    }

    @Test
    void everyGoroutineInfoFieldReachesTheWire() {
        GoroutineInfo info = runtime.goroutines().stream().filter(g -> "j1".equals(g.labels().get("job"))).findFirst().orElseThrow();
        JsonNode g = dump("job=j1").get("goroutines").get(0);
        assertThat(g.get("id").asLong()).isEqualTo(info.id());
        assertThat(g.get("parentId").asLong()).isEqualTo(info.parentId());
        assertThat(g.get("createdBy").get("function").asString())
                .isEqualTo(info.createdAt().getClassName() + "." + info.createdAt().getMethodName());
        assertThat(g.get("waitingForMs").asLong()).isGreaterThanOrEqualTo(0);
    }
}
