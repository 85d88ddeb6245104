package io.gosched.api.debug;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.testapp.TestApplication;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * GET /api/v1/debug/goroutines and /api/v1/jobs/{id}/goroutines over real HTTP: a job's goroutines
 * carry job=<id>, show their wait and frames, and the filters and bounds answer problems.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GoroutineEndpointsTest {

    @LocalServerPort
    int port;

    WebTestClient http() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(20)).build();
    }

    JsonNode getJson(String uri) {
        return http().get().uri(uri).exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    @Test
    void aBlockedJobsGoroutinesAreListedWithTheJobLabelTheirWaitAndFrames() throws Exception {
        String body = """
                {"workload":{"channels":[{"name":"never","capacity":0}],"steps":[
                  {"op":"spawn","count":2,"steps":[{"op":"recv","channel":"never"}]},{"op":"recv","channel":"never"}]}}""";
        JsonNode job = http().post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isAccepted().expectBody(JsonNode.class).returnResult().getResponseBody();
        String id = job.get("id").asString();
        try {
            JsonNode mine = null;
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < end) {
                mine = getJson("/api/v1/jobs/" + id + "/goroutines");
                int waiting = 0;
                for (JsonNode g : mine.get("goroutines")) {
                    waiting += g.get("state").asString().equals("waiting") ? 1 : 0;
                }
                if (waiting >= 3) {
                    break;
                }
                Thread.sleep(20);
            }
            assertThat(mine.get("job").asString()).isEqualTo(id);
            assertThat(mine.get("total").asInt()).isGreaterThanOrEqualTo(3);
            for (JsonNode g : mine.get("goroutines")) {
                assertThat(g.get("labels").get("job").asString()).isEqualTo(id);
            }
            JsonNode waiter = null;
            for (JsonNode g : mine.get("goroutines")) {
                if (g.get("state").asString().equals("waiting")) {
                    waiter = g;
                }
            }
            // The DSL's recv is a select with the job's context, shown as the receive it is.
            assertThat(waiter.get("waitReason").asString()).isEqualTo("chan receive");
            assertThat(waiter.get("stack").size()).isPositive();
            assertThat(waiter.get("stack").get(0).get("function").asString()).isNotBlank();
            assertThat(waiter.get("createdBy").get("file").asString()).endsWith(".java");

            JsonNode filtered = getJson("/api/v1/debug/goroutines?job=" + id + "&state=waiting");
            assertThat(filtered.get("total").asInt()).isEqualTo(3);
            JsonNode byLabel = getJson("/api/v1/debug/goroutines?label=job:" + id);
            assertThat(byLabel.get("total").asInt()).isGreaterThanOrEqualTo(3);
            assertThat(getJson("/api/v1/debug/goroutines?job=" + id + "&limit=1").get("truncated").asBoolean()).isTrue();

            String text = http().get().uri("/api/v1/debug/goroutines?format=text&job=" + id).exchange().expectStatus().isOk()
                    .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN).expectBody(String.class).returnResult().getResponseBody();
            assertThat(text).containsPattern("goroutine \\d+ \\[(chan receive|select)[^\\]]* labels:\\{\"job\":\"" + id + "\"\\}\\]:\n");
            assertThat(text).contains("created by ");
        } finally {
            http().delete().uri("/api/v1/jobs/" + id).exchange();
        }
    }

    @Test
    void badFiltersAnswer422AndAnUnknownJob404() {
        for (String q : new String[] {"state=sleeping", "label=nocolon", "format=xml", "limit=0", "limit=10001"}) {
            JsonNode p = http().get().uri("/api/v1/debug/goroutines?" + q).exchange().expectStatus().isEqualTo(422)
                    .expectBody(JsonNode.class).returnResult().getResponseBody();
            assertThat(p.get("type").asString()).as(q).isEqualTo("urn:gosched:problem:invalid-request");
            String name = q.substring(0, q.indexOf('='));
            assertThat(p.get("parameter").asString()).as(q).isEqualTo(name);
            assertThat(p.get("errors").get(0).get("pointer").asString()).as(q).isEqualTo("/" + name);
        }
        JsonNode limit = http().get().uri("/api/v1/debug/goroutines?limit=0").exchange().expectStatus().isEqualTo(422)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(limit.get("min").asInt()).isEqualTo(1);
        assertThat(limit.get("max").asInt()).isEqualTo(10_000);
        JsonNode state = http().get().uri("/api/v1/debug/goroutines?state=sleeping").exchange().expectStatus().isEqualTo(422)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(state.get("allowed").valueStream().map(JsonNode::asString).toList())
                .containsExactly("running", "runnable", "waiting", "syscall");
        http().get().uri("/api/v1/jobs/no-such-job/goroutines").exchange().expectStatus().isNotFound();
    }

    @Test
    void leakedListIsServed() {
        JsonNode l = getJson("/api/v1/debug/goroutines/leaked");
        assertThat(l.get("leakedTotal").asLong()).isGreaterThanOrEqualTo(0);
        assertThat(l.get("goroutines").isArray()).isTrue();
    }
}
