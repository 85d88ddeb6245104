package io.gosched.starter;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.gosched.testing.Await;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A team's Boot application with the starter, over real HTTP: its {@code @JobHandler} methods are
 * job types, their arguments bound and validated at submission (a 422 naming the field), their
 * return value the result, an exception a failure retried under the job's policy.
 */
@SpringBootTest(classes = StarterTestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class HandlerJobsHttpTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient http;

    @Autowired
    StarterTestApp.ImageHandlers handlers;

    @Autowired
    StarterTestApp.ProgressHandlers progressHandlers;

    private JsonNode submit(String body) {
        byte[] answer = http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isAccepted().expectBody().returnResult().getResponseBody();
        return JSON.readTree(answer);
    }

    private JsonNode job(String id) {
        return JSON.readTree(http.get().uri("/api/v1/jobs/" + id).exchange().expectStatus().isOk().expectBody().returnResult()
                .getResponseBody());
    }

    private JsonNode ended(String id) {
        return Await.value("job " + id + " ended", Duration.ofSeconds(30), () -> {
            JsonNode j = job(id);
            String s = j.get("state").asString();
            return s.equals("queued") || s.equals("running") || s.equals("waiting") ? null : j;
        });
    }

    private JsonNode problem(String body) {
        byte[] answer = http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isEqualTo(422).expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().returnResult().getResponseBody();
        JsonNode p = JSON.readTree(answer);
        assertThat(p.get("type").asString()).isEqualTo("urn:gosched:problem:invalid-request");
        return p;
    }

    private static List<String> pointers(JsonNode problem) {
        return problem.get("errors").valueStream().map(e -> e.get("pointer").asString()).toList();
    }

    private static String detailAt(JsonNode problem, String pointer) {
        return problem.get("errors").valueStream().filter(e -> e.get("pointer").asString().equals(pointer))
                .map(e -> e.get("detail").asString()).findFirst().orElseThrow();
    }

    @Test
    void aHandlerJobRunsTheMethodAsAGoroutineAndItsReturnValueIsTheResult() {
        JsonNode accepted = submit("""
                {"handler": "resize-image", "args": {"url": "https://img.example/a.png", "size": {"width": 640, "height": 480},
                 "format": "PNG", "tags": ["a"]}}""");
        String id = accepted.get("id").asString();
        JsonNode done = ended(id);
        assertThat(done.get("state").asString()).as(done.toString()).isEqualTo("succeeded");
        JsonNode result = done.get("result");
        assertThat(result.get("area").asLong()).isEqualTo(640L * 480);
        assertThat(result.get("url").asString()).isEqualTo("https://img.example/a.png");
        assertThat(result.get("format").asString()).isEqualTo("PNG");
        assertThat(result.get("jobId").asString()).as("JobContext.jobId()").isEqualTo(id);
        assertThat(result.get("attempt").asInt()).as("JobContext.attempt()").isEqualTo(1);
        assertThat(result.get("goroutine").asBoolean()).as("the body runs in a goroutine").isTrue();
        // The record keeps the kind other parts route and count by.
        assertThat(done.toString()).doesNotContain("lastReceived");
    }

    @Test
    void aHandlersProgressShowsInItsViewAndEventsWhileItRunsAndItsLastReportStaysAfterItEnds() {
        String key = UUID.randomUUID().toString();
        String longMessage = "x".repeat(150) + "y".repeat(100); // 250 characters: the view keeps the first 200
        String id = submit("""
                {"handler": "steps", "args": {"key": "%s", "message": "%s"}}""".formatted(key, longMessage)).get("id").asString();
        List<ServerSentEvent<String>> events = new CopyOnWriteArrayList<>();
        Disposable stream = http.get().uri("/api/v1/jobs/" + id + "/events").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isOk().returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {}).getResponseBody()
                .subscribe(events::add);
        try {
            // Running, its stream open, nothing reported yet: a report from now on is a change the stream must send.
            Await.until("the stream saw it running", () -> events.stream().anyMatch(ev -> ev.data() != null
                    && JSON.readTree(ev.data()).get("state").asString().equals("running")));
            assertThat(job(id).has("progress")).isFalse();
            StarterTestApp.ProgressHandlers.gate(progressHandlers.report, key).countDown();
            // Held at the second gate: the report made before it is the job's progress, live.
            JsonNode running = Await.value("the report before the gate shows", Duration.ofSeconds(30), () -> {
                JsonNode j = job(id);
                return j.has("progress") && j.get("progress").get("fraction").asDouble() == 0.5 ? j : null;
            });
            assertThat(running.get("state").asString()).isEqualTo("running");
            JsonNode p = running.get("progress");
            assertThat(p.get("message").asString()).isEqualTo(longMessage.substring(0, 200));
            assertThat(Instant.parse(p.get("at").asString())).isBetween(Instant.parse(running.get("startedAt").asString()), Instant.now());
            // ... and a progress event of its stream, while the counters stand still.
            ServerSentEvent<String> e = Await.value("a progress event with the report", Duration.ofSeconds(30), () -> events.stream()
                    .filter(ev -> "progress".equals(ev.event()) && JSON.readTree(ev.data()).has("progress")).findFirst().orElse(null));
            JsonNode evp = JSON.readTree(e.data()).get("progress");
            assertThat(evp.get("fraction").asDouble()).isEqualTo(0.5);
            assertThat(evp.get("message").asString()).isEqualTo(longMessage.substring(0, 200));
        } finally {
            StarterTestApp.ProgressHandlers.gate(progressHandlers.report, key).countDown();
            StarterTestApp.ProgressHandlers.gate(progressHandlers.release, key).countDown();
        }
        // The report made just before it returned stays: written with the attempt's end.
        JsonNode done = ended(id);
        assertThat(done.get("state").asString()).as(done.toString()).isEqualTo("succeeded");
        JsonNode last = done.get("progress");
        assertThat(last).as(done.toString()).isNotNull();
        assertThat(last.get("message").asString()).isEqualTo("done, 3 of 3 written");
        assertThat(last.has("fraction")).as("a report without a fraction has none").isFalse();
        Await.until("the stream ended with the job", () -> events.stream().anyMatch(ev -> ev.data() != null
                && JSON.readTree(ev.data()).get("state").asString().equals("succeeded")));
        stream.dispose();
        // A job that reports nothing has no progress.
        assertThat(ended(submit("{\"handler\": \"nothing\"}").get("id").asString()).has("progress")).isFalse();
    }

    @Test
    void aVoidHandlerHasANullResult() {
        JsonNode done = ended(submit("{\"handler\": \"nothing\"}").get("id").asString());
        assertThat(done.get("state").asString()).isEqualTo("succeeded");
        assertThat(done.has("result")).isTrue();
        assertThat(done.get("result").isNull()).as(done.toString()).isTrue();
    }

    @Test
    void aBadArgumentIsA422NamingTheFieldAtSubmission() {
        JsonNode p = problem("""
                {"handler": "resize-image", "args": {"url": " ", "size": {"width": 0, "height": 480}, "tags": ["x", ""]}}""");
        assertThat(pointers(p)).containsExactlyInAnyOrder("/args/url", "/args/size/width", "/args/tags/1");
        assertThat(detailAt(p, "/args/size/width")).contains("1");
        // A missing nested object: @NotNull on the component.
        assertThat(pointers(problem("{\"handler\": \"resize-image\", \"args\": {\"url\": \"u\"}}"))).containsExactly("/args/size");
        // Nothing of either was submitted.
        assertThat(JSON.readTree(http.get().uri("/api/v1/jobs?size=500").exchange().expectBody().returnResult().getResponseBody())
                .toString()).doesNotContain("\" \"");
    }

    @Test
    void aTypeMismatchIsA422NamingTheField() {
        JsonNode p = problem("""
                {"handler": "resize-image", "args": {"url": "u", "size": {"width": "wide", "height": 480}}}""");
        assertThat(pointers(p)).containsExactly("/args/size/width");
        JsonNode e = problem("""
                {"handler": "resize-image", "args": {"url": "u", "size": {"width": 1, "height": 1}, "format": "GIF"}}""");
        assertThat(pointers(e)).containsExactly("/args/format");
        assertThat(detailAt(e, "/args/format")).contains("PNG").contains("JPEG");
        assertThat(pointers(problem("{\"handler\": \"resize-image\", \"args\": [1]}"))).containsExactly("/args");
        assertThat(pointers(problem("{\"handler\": \"resize-image\"}"))).containsExactly("/args");
        assertThat(pointers(problem("{\"handler\": \"nothing\", \"args\": {\"x\": 1}}"))).containsExactly("/args");
    }

    @Test
    void anUnknownHandlerIsA422NamingTheHandlersThereAre() {
        JsonNode p = problem("{\"handler\": \"resize-imag\", \"args\": {}}");
        assertThat(pointers(p)).containsExactly("/handler");
        assertThat(detailAt(p, "/handler")).contains("resize-imag").contains("resize-image").contains("flaky");
    }

    @Test
    void anExceptionFailsTheAttemptAndTheRetryPolicyApplies() {
        String key = UUID.randomUUID().toString();
        // Two failures, three attempts allowed: the third succeeds.
        JsonNode ok = ended(submit("""
                {"handler": "flaky", "args": {"failures": 2, "key": "%s"}, "retry": {"maxAttempts": 3, "backoffMs": 10}}"""
                .formatted(key)).get("id").asString());
        assertThat(ok.get("state").asString()).as(ok.toString()).isEqualTo("succeeded");
        assertThat(ok.get("attempt").asInt()).isEqualTo(3);
        assertThat(ok.get("result").asString()).isEqualTo("ok after 3");
        assertThat(ok.get("attempts").valueStream().map(a -> a.get("outcome").asString()).toList()).startsWith("failed", "failed");
        assertThat(ok.get("attempts").get(0).get("error").get("detail").asString()).isEqualTo("target down (attempt 1)");

        // More failures than attempts: failed, with the handler's message, after exactly maxAttempts.
        String other = UUID.randomUUID().toString();
        JsonNode failed = ended(submit("""
                {"handler": "flaky", "args": {"failures": 5, "key": "%s"}, "retry": {"maxAttempts": 2, "backoffMs": 10}}"""
                .formatted(other)).get("id").asString());
        assertThat(failed.get("state").asString()).isEqualTo("failed");
        assertThat(failed.get("attempt").asInt()).isEqualTo(2);
        assertThat(failed.get("error").get("detail").asString()).isEqualTo("target down (attempt 2)");
        assertThat(handlers.attempts.get(other).get()).isEqualTo(2);
    }

    @Test
    void theJobsDeadlineEndsTheContextAndTheJobTimesOut() {
        JsonNode j = ended(submit("{\"handler\": \"wait-for-cancel\", \"timeoutMs\": 300}").get("id").asString());
        assertThat(j.get("state").asString()).as(j.toString()).isEqualTo("timed_out");
    }

    @Test
    void aCancelEndsTheHandlersContext() {
        String id = submit("{\"handler\": \"wait-for-cancel\"}").get("id").asString();
        Await.until("running", () -> job(id).get("state").asString().equals("running"));
        http.delete().uri("/api/v1/jobs/" + id).exchange().expectStatus().is2xxSuccessful();
        assertThat(ended(id).get("state").asString()).isEqualTo("cancelled");
    }

    @Test
    void handlersAreListedWithTheSchemaOfTheirArguments() {
        JsonNode list = JSON.readTree(http.get().uri("/api/v1/handlers").exchange().expectStatus().isOk().expectBody().returnResult()
                .getResponseBody());
        assertThat(list.valueStream().map(h -> h.get("name").asString()).toList())
                .containsExactly("flaky", "nap", "nothing", "resize-image", "steps", "wait-for-cancel");
        JsonNode resize = list.valueStream().filter(h -> h.get("name").asString().equals("resize-image")).findFirst().orElseThrow();
        assertThat(resize.get("blocking").asBoolean()).isFalse();
        assertThat(resize.get("description").asString()).isEqualTo("Scales an image (computes the area, here)");
        JsonNode s = resize.get("argsSchema");
        assertThat(s.get("$schema").asString()).isEqualTo("https://json-schema.org/draft/2020-12/schema");
        assertThat(s.get("type").asString()).isEqualTo("object");
        assertThat(s.get("required").valueStream().map(JsonNode::asString).toList()).containsExactly("url", "size");
        JsonNode props = s.get("properties");
        assertThat(props.get("url").get("type").asString()).isEqualTo("string");
        JsonNode size = props.get("size");
        assertThat(size.get("required").valueStream().map(JsonNode::asString).toList()).containsExactly("width", "height");
        assertThat(size.get("properties").get("width").get("type").asString()).isEqualTo("integer");
        assertThat(size.get("properties").get("width").get("minimum").asLong()).isEqualTo(1);
        assertThat(size.get("properties").get("width").get("maximum").asLong()).isEqualTo(4096);
        assertThat(props.get("format").get("enum").valueStream().map(JsonNode::asString).toList()).containsExactly("PNG", "JPEG");
        assertThat(props.get("tags").get("type").asString()).isEqualTo("array");
        assertThat(props.get("tags").get("maxItems").asInt()).isEqualTo(3);
        assertThat(props.get("tags").get("items").get("type").asString()).isEqualTo("string");
        assertThat(props.get("meta").get("type").asString()).isEqualTo("object");
        assertThat(props.get("meta").get("additionalProperties").get("type").asString()).isEqualTo("integer");
        JsonNode nap = list.valueStream().filter(h -> h.get("name").asString().equals("nap")).findFirst().orElseThrow();
        assertThat(nap.get("blocking").asBoolean()).isTrue();
        assertThat(nap.get("argsSchema").get("properties").get("ms").get("maximum").asLong()).isEqualTo(10_000);
        assertThat(nap.get("argsSchema").get("required").valueStream().map(JsonNode::asString).toList()).containsExactly("ms");
    }

    @Test
    void theOpenApiDocumentShowsTheHandlersAndTheirArguments() {
        // springdoc builds the document at the first call: slow on a busy machine.
        JsonNode doc = JSON.readTree(http.mutate().responseTimeout(Duration.ofSeconds(60)).build().get().uri("/v3/api-docs").exchange().expectStatus().isOk().expectBody().returnResult()
                .getResponseBody());
        assertThat(doc.get("paths").has("/api/v1/handlers")).isTrue();
        assertThat(doc.get("paths").get("/api/v1/handlers").has("get")).isTrue();
        JsonNode schemas = doc.get("components").get("schemas");
        for (String body : List.of("JobSubmission", "JobBatchEntry")) {
            JsonNode props = schemas.get(body).get("properties");
            assertThat(props.get("handler").get("enum").valueStream().map(JsonNode::asString).toList()).as(body)
                    .containsExactly("flaky", "nap", "nothing", "resize-image", "steps", "wait-for-cancel");
            assertThat(props.get("args").get("anyOf").valueStream().map(r -> r.get("$ref").asString()).toList()).as(body)
                    .contains("#/components/schemas/HandlerArgs.resize-image", "#/components/schemas/HandlerArgs.nap");
        }
        JsonNode resize = schemas.get("HandlerArgs.resize-image");
        assertThat(resize.get("description").asString()).isEqualTo("Scales an image (computes the area, here)");
        assertThat(resize.get("required").valueStream().map(JsonNode::asString).toList()).containsExactlyInAnyOrder("url", "size");
        assertThat(resize.get("properties").get("size").get("properties").get("width").get("maximum").asInt()).isEqualTo(4096);
    }

}
