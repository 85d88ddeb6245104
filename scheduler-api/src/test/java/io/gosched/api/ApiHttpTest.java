package io.gosched.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.gosched.service.job.spi.JobState;
import io.gosched.api.testapp.TestApplication;
import io.gosched.runtime.GoRuntime;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every endpoint through WebTestClient against the whole auto-configured API (real runtime,
 * real services), and every error class for its status and problem body.
 */
@SpringBootTest(classes = TestApplication.class)
@AutoConfigureWebTestClient
class ApiHttpTest {

    @Autowired
    WebTestClient http;

    @Autowired
    GoRuntime runtime;

    static String q(String s) {
        return s.replace('\'', '"');
    }

    WebTestClient.ResponseSpec post(String uri, String body) {
        return http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(q(body)).exchange();
    }

    String submit(String body) {
        JsonNode job = post("/api/v1/jobs", body).expectStatus().isAccepted()
                .expectHeader().valueMatches("Location", "/api/v1/jobs/[0-9a-f-]{36}")
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        return job.get("id").stringValue();
    }

    JsonNode job(String id) {
        return http.get().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
    }

    JsonNode awaitState(String id, JobState state) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        JsonNode j;
        do {
            j = job(id);
            if (j.get("state").stringValue().equals(state.json())) {
                return j;
            }
            sleep(10);
        } while (System.nanoTime() < end);
        throw new AssertionError("job " + id + " never reached " + state + ": " + j);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Problem body checks shared by every error test. */
    static void problem(WebTestClient.ResponseSpec r, int status, String type) {
        r.expectStatus().isEqualTo(status)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:" + type)
                .jsonPath("$.status").isEqualTo(status)
                .jsonPath("$.detail").isNotEmpty()
                .jsonPath("$.trace").doesNotExist()
                .jsonPath("$.exception").doesNotExist();
    }

    // ------------------------------------------------------------------ jobs

    @Test
    void aWorkloadRunsToSuccessWithCounters() {
        String id = submit("""
                {'workload':{'channels':[{'name':'c','capacity':0}],'steps':[
                   {'op':'spawn','count':4,'steps':[{'op':'compute','us':200},{'op':'send','channel':'c','value':{'n':7}}]},
                   {'op':'recv','channel':'c','times':4},{'op':'sleep','ms':1},{'op':'yield'},{'op':'syscall','ms':1},
                   {'op':'select','cases':[{'recv':'c'}],'default':true},{'op':'wait'}]}}""");
        JsonNode j = awaitState(id, JobState.SUCCEEDED);
        assertThat(j.at("/counters/goroutinesSpawned").asLong()).isEqualTo(4);
        assertThat(j.at("/counters/messagesSent").asLong()).isEqualTo(4);
        assertThat(j.at("/counters/messagesReceived").asLong()).isEqualTo(4);
        assertThat(j.at("/counters/liveGoroutines").asLong()).isZero();
        assertThat(j.at("/result/lastReceived/n").asInt()).isEqualTo(7);
        assertThat(j.get("attempt").asInt()).isEqualTo(1);
        assertThat(Instant.parse(j.get("finishedAt").stringValue())).isAfterOrEqualTo(Instant.parse(j.get("startedAt").stringValue()));
        http.get().uri("/api/v1/jobs/{id}/result", id).exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.state").isEqualTo("succeeded").jsonPath("$.result.lastReceived.n").isEqualTo(7);
    }

    @Test
    void everyTemplateRunsToSuccess() {
        Map<String, String> params = Map.of("ping-pong", "{'rounds':50}", "fan-out-fan-in", "{'workers':4,'itemsPerWorker':10,'computeUs':10}",
                "pipeline", "{'stages':3,'items':20,'computeUs':5}", "timer-storm", "{'goroutines':50,'sleeps':3,'sleepMs':1}",
                "hog-vs-ticker", "{'hogs':2,'hogUs':2000,'bursts':3,'ticks':5,'tickMs':1}");
        http.get().uri("/api/v1/workloads").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.templates.length()").isEqualTo(5)
                .jsonPath("$.templates[0].params[0].name").isEqualTo("rounds")
                .jsonPath("$.ops.length()").isEqualTo(13);
        params.forEach((name, p) -> {
            String id = submit("{'template':'" + name + "','params':" + p + "}");
            JsonNode j = awaitState(id, JobState.SUCCEEDED);
            assertThat(j.get("template").stringValue()).isEqualTo(name);
            if (name.equals("ping-pong")) {
                assertThat(j.at("/counters/messagesSent").asLong()).isEqualTo(100);
                assertThat(j.at("/counters/messagesReceived").asLong()).isEqualTo(100);
            }
        });
    }

    @Test
    void cancellationEndsEveryGoroutineOfTheJob() {
        String ch = unique("never");
        post("/api/v1/channels", "{'name':'" + ch + "','capacity':0}").expectStatus().isCreated();
        long before = runtime.stats().goroutines();
        String id = submit("""
                {'workload':{'steps':[{'op':'spawn','count':30,'steps':[{'op':'sleep','ms':60000}]},
                   {'op':'spawn','count':10,'steps':[{'op':'recv','channel':'%s'}]},
                   {'op':'spawn','count':5,'steps':[{'op':'loop','times':60,'steps':[{'op':'compute','us':1000000}]}]},
                   {'op':'spawn','count':2,'steps':[{'op':'syscall','ms':10000}]},
                   {'op':'spawn','count':1,'steps':[{'op':'loop','times':100000,'steps':[{'op':'yield'}]}]},
                   {'op':'wait'}]}}""".formatted(ch));
        awaitState(id, JobState.RUNNING);
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (job(id).at("/counters/liveGoroutines").asInt() < 49 && System.nanoTime() < end) {
            sleep(5);
        }
        assertThat(job(id).at("/counters/liveGoroutines").asInt()).as("all 48 children and main are live").isEqualTo(49);
        http.delete().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isAccepted();
        JsonNode j = awaitState(id, JobState.CANCELLED);
        assertThat(j.at("/counters/liveGoroutines").asInt()).isZero();
        assertThat(j.at("/counters/goroutinesSpawned").asLong()).isEqualTo(48);
        end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (runtime.stats().goroutines() > before && System.nanoTime() < end) {
            sleep(5);
        }
        assertThat(runtime.stats().goroutines()).as("runtime goroutines back to where they were").isLessThanOrEqualTo(before);
        problem(http.delete().uri("/api/v1/jobs/{id}", id).exchange(), 409, "job-finished");
    }

    @Test
    void aQueuedJobIsCancelledAtOnce() {
        String id = submit("{'workload':{'steps':[{'op':'yield'}]},'notBefore':'" + Instant.now().plusSeconds(30) + "'}");
        assertThat(job(id).get("state").stringValue()).isEqualTo("queued");
        http.get().uri("/api/v1/jobs/{id}/result", id).exchange().expectStatus().isAccepted().expectHeader().valueEquals("Retry-After", "1");
        http.delete().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isOk().expectBody().jsonPath("$.state").isEqualTo("cancelled");
    }

    @Test
    void notBeforeDelaysTheStart() {
        Instant nb = Instant.now().plusMillis(300);
        String id = submit("{'workload':{'steps':[{'op':'yield'}]},'notBefore':'" + nb + "'}");
        JsonNode j = awaitState(id, JobState.SUCCEEDED);
        assertThat(Instant.parse(j.get("startedAt").stringValue())).isAfterOrEqualTo(nb.minusMillis(20));
    }

    @Test
    void theDeadlineTimesTheJobOut() {
        String id = submit("{'workload':{'steps':[{'op':'spawn','count':3,'steps':[{'op':'sleep','ms':30000}]}]},'timeoutMs':100}");
        JsonNode j = awaitState(id, JobState.TIMED_OUT);
        assertThat(j.at("/counters/liveGoroutines").asInt()).isZero();
        assertThat(j.at("/error/detail").stringValue()).contains("timeout of 100 ms");
    }

    @Test
    void aFailingStepIsNamedByPointerAndRetriesFollowThePolicy() {
        String id = submit("""
                {'workload':{'channels':[{'name':'c','capacity':1}],
                  'steps':[{'op':'close','channel':'c'},{'op':'send','channel':'c','value':1}]},
                 'retry':{'maxAttempts':3,'backoffMs':5,'multiplier':2}}""");
        JsonNode j = awaitState(id, JobState.FAILED);
        assertThat(j.get("attempt").asInt()).isEqualTo(3);
        assertThat(j.at("/error/pointer").stringValue()).isEqualTo("/workload/steps/1");
        http.post().uri("/api/v1/jobs/{id}/retry", id).exchange().expectStatus().isAccepted();
        JsonNode again = awaitState(id, JobState.FAILED);
        assertThat(again.get("attempt").asInt()).as("a manual retry gives a fresh budget of 3").isEqualTo(6);
        String ok = submit("{'workload':{'steps':[{'op':'yield'}]}}");
        awaitState(ok, JobState.SUCCEEDED);
        problem(http.post().uri("/api/v1/jobs/{id}/retry", ok).exchange(), 409, "job-not-retryable");
    }

    @Test
    void idempotencyKeyReplaysTheSameJobAndRefusesAnotherBody() {
        String key = unique("key");
        String body = q("{'workload':{'steps':[{'op':'yield'}]}}");
        String first = http.post().uri("/api/v1/jobs").header("Idempotency-Key", key).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectStatus().isAccepted().expectBody(JsonNode.class).returnResult()
                .getResponseBody().get("id").stringValue();
        http.post().uri("/api/v1/jobs").header("Idempotency-Key", key).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isAccepted().expectHeader().valueEquals("Idempotent-Replayed", "true")
                .expectBody().jsonPath("$.id").isEqualTo(first);
        problem(http.post().uri("/api/v1/jobs").header("Idempotency-Key", key).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(q("{'workload':{'steps':[{'op':'wait'}]}}")).exchange(), 409, "idempotency-conflict");
    }

    @Test
    void listsJobsPagedAndFilteredByState() {
        String id = submit("{'workload':{'steps':[{'op':'yield'}]},'name':'listed'}");
        awaitState(id, JobState.SUCCEEDED);
        http.get().uri("/api/v1/jobs?state=succeeded&size=500").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.items[?(@.id == '" + id + "')].name").isEqualTo("listed")
                .jsonPath("$.items[?(@.state != 'succeeded')]").isEmpty()
                .jsonPath("$.size").isEqualTo(500);
        http.get().uri("/api/v1/jobs?size=1&page=0").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.items.length()").isEqualTo(1);
        problem(http.get().uri("/api/v1/jobs?state=bogus").exchange(), 422, "invalid-request");
        problem(http.get().uri("/api/v1/jobs?size=0").exchange(), 422, "invalid-request");
        problem(http.get().uri("/api/v1/jobs?size=abc").exchange(), 400, "malformed-request");
        http.get().uri("/api/v1/jobs?state=bogus").exchange().expectBody()
                .jsonPath("$.parameter").isEqualTo("state")
                .jsonPath("$.allowed").value(a -> assertThat(a.toString()).contains("timed_out"));
        http.get().uri("/api/v1/jobs?size=501").exchange().expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.parameter").isEqualTo("size").jsonPath("$.min").isEqualTo(1).jsonPath("$.max").isEqualTo(500);
        http.get().uri("/api/v1/jobs?page=-1").exchange().expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.parameter").isEqualTo("page");
        http.get().uri("/api/v1/jobs?size=abc").exchange().expectBody().jsonPath("$.parameter").isEqualTo("size");
        http.get().uri("/api/v1/jobs?state=TIMED_OUT").exchange().expectStatus().isOk();
    }

    @Test
    void eventsStreamStateChangesUntilTheJobEnds() {
        String id = submit("{'workload':{'steps':[{'op':'sleep','ms':150},{'op':'loop','times':3,'steps':[{'op':'sleep','ms':120}]}]}}");
        Flux<ServerSentEvent<JsonNode>> events = http.get().uri("/api/v1/jobs/{id}/events", id).accept(MediaType.TEXT_EVENT_STREAM)
                .exchange().expectStatus().isOk()
                .returnResult(new ParameterizedTypeReference<ServerSentEvent<JsonNode>>() {}).getResponseBody();
        List<ServerSentEvent<JsonNode>> all = events.collectList().block(Duration.ofSeconds(20));
        assertThat(all).isNotEmpty();
        assertThat(all.getLast().event()).isEqualTo("state");
        assertThat(all.getLast().data().get("state").stringValue()).isEqualTo("succeeded");
        assertThat(all).extracting(ServerSentEvent::event).contains("progress");
        problem(http.get().uri("/api/v1/jobs/{id}/events", "nope").accept(MediaType.TEXT_EVENT_STREAM).exchange(), 404, "not-found");
    }

    @Test
    void jobErrorsAreProblemDetailsNamingTheField() {
        problem(http.get().uri("/api/v1/jobs/{id}", "no-such-job").exchange(), 404, "not-found");
        post("/api/v1/jobs", "{'workload':{'steps':[{'op':'compute','us':-5},{'op':'fly'}]},'priority':12}")
                .expectStatus().isEqualTo(422)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.errors[?(@.pointer == '/workload/steps/0/us')]").exists()
                .jsonPath("$.errors[?(@.pointer == '/workload/steps/1/op')]").exists()
                .jsonPath("$.errors[?(@.pointer == '/priority')]").exists()
                .jsonPath("$.instance").isEqualTo("/api/v1/jobs");
        problem(post("/api/v1/jobs", "{'template':'nope'}"), 422, "invalid-request");
        problem(post("/api/v1/jobs", "{'template':'ping-pong','params':{'rounds':100000000}}"), 422, "invalid-request");
        problem(post("/api/v1/jobs", "{'workload':{'steps':[{'op':'recv','channel':'does-not-exist'}]}}"), 422, "invalid-request");
        problem(post("/api/v1/jobs", "{'workload':{'steps':[{'op':'yield'}]},'notBefore':'tomorrow'}"), 422, "invalid-request");
        problem(post("/api/v1/jobs", "{'workload':{'steps':[{'op':'yield'}]},'timeoutMs':999999999}"), 422, "invalid-request");
        post("/api/v1/jobs", "{'workload':{'steps':[{'op':'yield'}]}, 'priority': }").expectStatus().isBadRequest()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request")
                .jsonPath("$.errors[0].pointer").isEqualTo("/priority");
        problem(post("/api/v1/jobs", ""), 400, "malformed-request");
        problem(http.post().uri("/api/v1/jobs").contentType(MediaType.TEXT_PLAIN).bodyValue("hi").exchange(), 415, "unsupported-media-type");
        problem(http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"" + "x".repeat(70_000) + "\"}")
                .exchange(), 413, "payload-too-large");
        problem(http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON) // chunked: no Content-Length
                .body(org.springframework.web.reactive.function.BodyInserters.fromPublisher(
                        Flux.range(0, 100).map(i -> i == 0 ? "{\"name\":\"" : "x".repeat(1000)), String.class))
                .exchange(), 413, "payload-too-large");
        problem(http.put().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{}").exchange(), 405, "method-not-allowed");
        problem(http.get().uri("/api/v1/nothing-here").exchange(), 404, "not-found");
        problem(http.post().uri("/api/v1/jobs").header("Idempotency-Key", "has space").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(q("{'workload':{'steps':[{'op':'yield'}]}}")).exchange(), 422, "invalid-request");
    }

    // ------------------------------------------------------------------ channels

    @Test
    void channelLifecycleOverHttp() {
        String ch = unique("buf");
        post("/api/v1/channels", "{'name':'" + ch + "','capacity':2}").expectStatus().isCreated()
                .expectHeader().valueEquals("Location", "/api/v1/channels/" + ch)
                .expectBody().jsonPath("$.capacity").isEqualTo(2).jsonPath("$.len").isEqualTo(0);
        problem(post("/api/v1/channels", "{'name':'" + ch + "','capacity':2}"), 409, "channel-exists");
        post("/api/v1/channels/" + ch + "/send", "{'value':{'a':1},'timeoutMs':100}").expectStatus().isOk()
                .expectBody().jsonPath("$.sent").isEqualTo(true);
        post("/api/v1/channels/" + ch + "/send", "{'value':null}").expectStatus().isOk().expectBody().jsonPath("$.sent").isEqualTo(true);
        post("/api/v1/channels/" + ch + "/send", "{'value':3,'timeoutMs':30}").expectStatus().isOk()
                .expectBody().jsonPath("$.sent").isEqualTo(false).jsonPath("$.reason").isEqualTo("timeout");
        http.get().uri("/api/v1/channels/" + ch).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.len").isEqualTo(2).jsonPath("$.closed").isEqualTo(false).jsonPath("$.waitingSenders").isEqualTo(0);
        http.get().uri("/api/v1/channels").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$[?(@.name == '" + ch + "')].len").isEqualTo(2);
        post("/api/v1/channels/" + ch + "/recv", "{}").expectStatus().isOk().expectBody()
                .jsonPath("$.received").isEqualTo(true).jsonPath("$.ok").isEqualTo(true).jsonPath("$.value.a").isEqualTo(1);
        http.post().uri("/api/v1/channels/" + ch + "/recv").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.received").isEqualTo(true).jsonPath("$.ok").isEqualTo(true).jsonPath("$.value").isEmpty();
        post("/api/v1/channels/" + ch + "/recv", "{'timeoutMs':30}").expectStatus().isOk().expectBody()
                .jsonPath("$.received").isEqualTo(false).jsonPath("$.reason").isEqualTo("timeout");
        http.post().uri("/api/v1/channels/" + ch + "/close").exchange().expectStatus().isOk().expectBody().jsonPath("$.closed").isEqualTo(true);
        post("/api/v1/channels/" + ch + "/recv", "{'timeoutMs':30}").expectStatus().isOk().expectBody()
                .jsonPath("$.received").isEqualTo(true).jsonPath("$.ok").isEqualTo(false);
        problem(post("/api/v1/channels/" + ch + "/send", "{'value':1}"), 409, "channel-closed");
        problem(http.post().uri("/api/v1/channels/" + ch + "/close").exchange(), 409, "channel-closed");
        http.delete().uri("/api/v1/channels/" + ch).exchange().expectStatus().isNoContent();
        problem(http.get().uri("/api/v1/channels/" + ch).exchange(), 404, "not-found");
        problem(http.delete().uri("/api/v1/channels/" + ch).exchange(), 404, "not-found");
    }

    @Test
    void channelErrorsNameTheField() {
        post("/api/v1/channels", "{'name':'bad name','capacity':-1}").expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.errors[?(@.pointer == '/name')]").exists()
                .jsonPath("$.errors[?(@.pointer == '/capacity')]").exists();
        problem(post("/api/v1/channels", "{'name':'ok-name','capacity':100000001}"), 422, "invalid-request");
        post("/api/v1/channels", "{'name':'x','capacity':'big'}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.errors[0].pointer").isEqualTo("/capacity");
        problem(post("/api/v1/channels", "{'capacity':1}"), 422, "invalid-request");
        problem(post("/api/v1/channels/nope/send", "{'value':1}"), 404, "not-found");
        problem(post("/api/v1/channels/nope/recv", "{}"), 404, "not-found");
        String ch = unique("e");
        post("/api/v1/channels", "{'name':'" + ch + "'}").expectStatus().isCreated();
        post("/api/v1/channels/" + ch + "/send", "{'timeoutMs':1}").expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.errors[0].pointer").isEqualTo("/value");
        post("/api/v1/channels/" + ch + "/send", "{'value':1,'timeoutMs':-1}").expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.errors[0].pointer").isEqualTo("/timeoutMs");
        post("/api/v1/channels/" + ch + "/recv", "{'timeoutMs':600001}").expectStatus().isEqualTo(422).expectBody()
                .jsonPath("$.errors[0].pointer").isEqualTo("/timeoutMs");
    }

    @Test
    void jobsAndHttpClientsShareNamedChannels() {
        String in = unique("in");
        String out = unique("out");
        post("/api/v1/channels", "{'name':'" + in + "'}").expectStatus().isCreated();
        post("/api/v1/channels", "{'name':'" + out + "','capacity':1}").expectStatus().isCreated();
        String id = submit("{'workload':{'steps':[{'op':'recv','channel':'" + in + "','times':2},"
                + "{'op':'send','channel':'" + out + "','value':'done'}]}}");
        for (int i = 0; i < 2; i++) {
            post("/api/v1/channels/" + in + "/send", "{'value':" + i + ",'timeoutMs':5000}").expectStatus().isOk()
                    .expectBody().jsonPath("$.sent").isEqualTo(true);
        }
        post("/api/v1/channels/" + out + "/recv", "{'timeoutMs':5000}").expectStatus().isOk().expectBody()
                .jsonPath("$.value").isEqualTo("done");
        JsonNode j = awaitState(id, JobState.SUCCEEDED);
        assertThat(j.at("/result/lastReceived").asInt()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ scheduler and docs

    @Test
    void schedulerShowsConfigAndStatsAndResizesGomaxprocs() {
        http.get().uri("/api/v1/scheduler").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.config.gomaxprocs").isEqualTo(2)
                .jsonPath("$.config.preemptQuantumMs").isEqualTo(10.0)
                .jsonPath("$.stats.gomaxprocs").isEqualTo(2)
                .jsonPath("$.stats.goroutines").isNumber();
        http.put().uri("/api/v1/scheduler/gomaxprocs").contentType(MediaType.APPLICATION_JSON).bodyValue(q("{'gomaxprocs':3}"))
                .exchange().expectStatus().isOk().expectBody().jsonPath("$.previous").isEqualTo(2).jsonPath("$.gomaxprocs").isEqualTo(3);
        assertThat(runtime.gomaxprocs()).isEqualTo(3);
        runtime.gomaxprocs(2);
        http.put().uri("/api/v1/scheduler/gomaxprocs").contentType(MediaType.APPLICATION_JSON).bodyValue(q("{'gomaxprocs':0}"))
                .exchange().expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].pointer").isEqualTo("/gomaxprocs");
        http.get().uri("/api/v1/scheduler/schedtrace").exchange().expectStatus().isOk();
    }

    @Test
    void openApiDocumentListsTheApi() {
        // springdoc builds the document on the first request: seconds on a loaded two-core machine.
        http.mutate().responseTimeout(Duration.ofSeconds(60)).build().get().uri("/v3/api-docs").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.paths['/api/v1/jobs'].post").exists()
                .jsonPath("$.paths['/api/v1/channels/{name}/send'].post").exists()
                .jsonPath("$.paths['/api/v1/scheduler/gomaxprocs'].put").exists()
                .jsonPath("$.paths['/api/v1/workloads'].get").exists()
                .jsonPath("$.components.schemas.JobView.properties.waitingFor.example").isEqualTo("handler resize-image");
        http.get().uri("/swagger-ui.html").exchange().expectStatus().is3xxRedirection();
    }
}
