package io.gosched.api.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.api.testapp.TestApplication;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * Jobs that wait for other jobs, and batches, over real HTTP: {@code after} on POST /api/v1/jobs
 * (unknown ids a 422 naming them by pointer, the view's {@code after} with states), and POST
 * /api/v1/jobs/batch (keys, all or none, cycles and sizes refused by pointer, the queue's limit
 * for the whole batch).
 */
@Timeout(120)
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "gosched.api.admission.max-queued-jobs=50")
class JobDependenciesHttpTest {

    private static final String OK = "{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}";
    private static final String SLOW = "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":300}]}";

    @LocalServerPort
    int port;

    WebTestClient http() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(20)).build();
    }

    WebTestClient.ResponseSpec post(String uri, String body) {
        return http().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    JsonNode job(String id) {
        return http().get().uri("/api/v1/jobs/" + id).exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult()
                .getResponseBody();
    }

    JsonNode await(String id, Predicate<JsonNode> until) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        JsonNode j = job(id);
        while (!until.test(j) && System.nanoTime() - end < 0) {
            Thread.sleep(20);
            j = job(id);
        }
        return j;
    }

    static List<String> pointers(JsonNode problem) {
        List<String> out = new ArrayList<>();
        problem.get("errors").forEach(v -> out.add(v.get("pointer").asString()));
        return out;
    }

    long total() {
        return http().get().uri("/api/v1/jobs?size=1").exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult()
                .getResponseBody().get("total").asLong();
    }

    @Test
    void aJobAfterAnotherWaitsThenRunsAndItsViewListsTheChain() throws InterruptedException {
        String a = post("/api/v1/jobs", SLOW + "}").expectStatus().isAccepted().expectBody(JsonNode.class).returnResult()
                .getResponseBody().get("id").asString();
        JsonNode b = post("/api/v1/jobs", OK + ",\"after\":[\"" + a + "\"]}").expectStatus().isAccepted().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(b.get("state").asString()).isEqualTo("waiting");
        assertThat(b.get("after").get(0).get("id").asString()).isEqualTo(a);
        assertThat(b.get("after").get(0).get("state").asString()).isIn("queued", "running");
        JsonNode done = await(b.get("id").asString(), j -> j.get("state").asString().equals("succeeded"));
        assertThat(done.get("state").asString()).isEqualTo("succeeded");
        assertThat(done.get("after").get(0).get("state").asString()).isEqualTo("succeeded");
        assertThat(http().get().uri("/api/v1/jobs?state=waiting").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody().get("items")).isNotNull();
    }

    @Test
    void unknownIdsAreA422NamingEachByPointer() {
        String a = post("/api/v1/jobs", OK + "}").expectStatus().isAccepted().expectBody(JsonNode.class).returnResult()
                .getResponseBody().get("id").asString();
        JsonNode p = post("/api/v1/jobs", OK + ",\"after\":[\"" + a + "\",\"nope-1\",\"nope-2\"]}").expectStatus().isEqualTo(422)
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(pointers(p)).containsExactly("/after/1", "/after/2");
        assertThat(p.toString()).contains("nope-1").contains("nope-2");
    }

    @Test
    void aBatchIsAcceptedWholeWithItsKeysResolved() throws InterruptedException {
        JsonNode r = post("/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"a\"," + SLOW.substring(1) + "},{\"key\":\"b\",\"after\":[\"a\"],"
                + OK.substring(1) + "},{" + OK.substring(1) + ",\"after\":[\"a\",\"b\"]}]}").expectStatus().isAccepted()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(r.get("ids")).hasSize(3);
        String a = r.get("ids").get(0).asString();
        String b = r.get("ids").get(1).asString();
        String c = r.get("ids").get(2).asString();
        assertThat(job(b).get("after").get(0).get("id").asString()).isEqualTo(a);
        JsonNode vc = await(c, j -> j.get("state").asString().equals("succeeded"));
        assertThat(vc.get("state").asString()).isEqualTo("succeeded");
        assertThat(vc.get("after").get(1).get("id").asString()).isEqualTo(b);
        assertThat(job(b).get("startedAt").asString()).isGreaterThanOrEqualTo(job(a).get("finishedAt").asString());
    }

    @Test
    void aResultStepInABatchReadsTheEntryItNamesByKey() throws InterruptedException {
        JsonNode r = post("/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"make\",\"workload\":{\"channels\":[{\"name\":\"c\","
                + "\"capacity\":1}],\"steps\":[{\"op\":\"send\",\"channel\":\"c\",\"value\":\"built\"},{\"op\":\"recv\","
                + "\"channel\":\"c\"}]}},{\"after\":[\"make\"],\"workload\":{\"steps\":[{\"op\":\"result\",\"of\":\"make\"}]}}]}")
                .expectStatus().isAccepted().expectBody(JsonNode.class).returnResult().getResponseBody();
        JsonNode done = await(r.get("ids").get(1).asString(), j -> j.get("state").asString().equals("succeeded"));
        assertThat(done.get("result").get("lastReceived").asString()).isEqualTo("built");
        JsonNode p = post("/api/v1/jobs", OK.replace("{\"op\":\"yield\"}", "{\"op\":\"result\",\"of\":\"elsewhere\"}") + "}")
                .expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(pointers(p)).containsExactly("/workload/steps/0/of");
    }

    @Test
    void aBatchWithBadEntriesIsRefusedWholeNamingEach() {
        long before = total();
        JsonNode p = post("/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"a\"," + OK.substring(1) + "},{\"key\":\"a\"," + OK.substring(1)
                + "},{" + OK.substring(1) + ",\"after\":[\"x-unknown\"]},{\"priority\":99," + OK.substring(1) + "}]}")
                .expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(pointers(p)).containsExactlyInAnyOrder("/jobs/1/key", "/jobs/2/after/0", "/jobs/3/priority");
        assertThat(total()).as("none of them stored").isEqualTo(before);
    }

    @Test
    void aCycleIsRefused() {
        JsonNode p = post("/api/v1/jobs/batch", "{\"jobs\":[{\"key\":\"a\",\"after\":[\"c\"]," + OK.substring(1) + "},{\"key\":\"b\","
                + "\"after\":[\"a\"]," + OK.substring(1) + "},{\"key\":\"c\",\"after\":[\"b\"]," + OK.substring(1) + "},{\"key\":\"d\","
                + "\"after\":[\"d\"]," + OK.substring(1) + "},{\"key\":\"e\",\"after\":[\"a\"]," + OK.substring(1) + "}]}")
                .expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(pointers(p)).containsExactlyInAnyOrder("/jobs/0/after/0", "/jobs/1/after/0", "/jobs/2/after/0", "/jobs/3/after/0");
    }

    @Test
    void tooManyIsRefused() {
        StringBuilder b = new StringBuilder("{\"jobs\":[");
        for (int i = 0; i < 1001; i++) {
            b.append(i == 0 ? "" : ",").append("{}");
        }
        JsonNode p = post("/api/v1/jobs/batch", b.append("]}").toString()).expectStatus().isEqualTo(422).expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(pointers(p)).containsExactly("/jobs");
        StringBuilder after = new StringBuilder(OK + ",\"after\":[");
        for (int i = 0; i < 101; i++) {
            after.append(i == 0 ? "" : ",").append("\"j").append(i).append('"');
        }
        JsonNode q = post("/api/v1/jobs", after.append("]}").toString()).expectStatus().isEqualTo(422).expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(pointers(q)).containsExactly("/after");
    }

    @Test
    void aBatchTheQueueCannotTakeWholeIsA429AndStoresNothing() {
        long before = total();
        StringBuilder b = new StringBuilder("{\"jobs\":[");
        for (int i = 0; i < 51; i++) {
            b.append(i == 0 ? "" : ",").append("{\"notBefore\":\"2999-01-01T00:00:00Z\",").append(OK.substring(1)).append('}');
        }
        // a notBefore this far out is refused as invalid; a plain batch of 51 is over the limit of 50
        post("/api/v1/jobs/batch", b.append("]}").toString().replace("\"notBefore\":\"2999-01-01T00:00:00Z\",", ""))
                .expectStatus().isEqualTo(429).expectHeader().exists("Retry-After");
        assertThat(total()).isEqualTo(before);
    }
}
