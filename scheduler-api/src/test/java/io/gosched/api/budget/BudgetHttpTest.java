package io.gosched.api.budget;

import io.gosched.service.budget.ServiceBudget;

import io.gosched.service.budget.Retained;

import io.gosched.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.gosched.api.testapp.TestApplication;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The budget over real HTTP with small bounds: a channel's share refusing sends, the open-call and
 * open-stream bounds refusing with 429, and the {@code /api/v1/limits} view.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gosched.api.limits.max-channel-bytes=65536", "gosched.api.admission.max-pending-channel-calls=2",
        "gosched.api.admission.max-open-streams=1"})
class BudgetHttpTest {

    @LocalServerPort
    int port;

    @Autowired
    ServiceBudget budget;

    WebTestClient http() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(20)).build();
    }

    WebClient async() {
        return WebClient.create("http://127.0.0.1:" + port);
    }

    @Test
    void aFullChannelShareAnswers429ProblemAndTheChannelShowsItsBytes() {
        http().post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"share\",\"capacity\":1000}")
                .exchange().expectStatus().isCreated();
        String value = "{\"value\":\"" + "s".repeat(1000) + "\",\"timeoutMs\":0}";
        int sent = 0;
        while (true) {
            var r = http().post().uri("/api/v1/channels/share/send").contentType(MediaType.APPLICATION_JSON).bodyValue(value).exchange()
                    .returnResult(JsonNode.class);
            if (r.getStatus().value() == 429) {
                assertThat(r.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
                assertThat(r.getResponseHeaders().getContentType().toString()).startsWith("application/problem+json");
                JsonNode p = r.getResponseBody().blockFirst();
                assertThat(p.get("type").asString()).isEqualTo("urn:gosched:problem:memory-budget");
                assertThat(p.get("budget").asString()).isEqualTo("gosched.api.limits.max-channel-bytes");
                assertThat(p.get("budgetBytes").asLong()).isEqualTo(65536);
                assertThat(p.get("instance").asString()).isEqualTo("/api/v1/channels/share/send");
                break;
            }
            assertThat(r.getStatus().value()).isEqualTo(200);
            sent++;
        }
        assertThat(sent).isBetween(55, 64);
        JsonNode view = http().get().uri("/api/v1/channels/share").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(view.get("len").asInt()).isEqualTo(sent);
        assertThat(view.get("maxBytes").asLong()).isEqualTo(65536);
        assertThat(view.get("bytes").asLong()).isBetween(65536L - 1100, 65536L);
        http().delete().uri("/api/v1/channels/share").exchange().expectStatus().isNoContent();
    }

    @Test
    void pendingChannelCallsBeyondTheirBoundAre429() {
        http().post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"name\":\"calls\",\"capacity\":0}")
                .exchange().expectStatus().isCreated();
        List<Disposable> waiting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            waiting.add(async().post().uri("/api/v1/channels/calls/recv").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"timeoutMs\":30000}").retrieve().bodyToMono(String.class).subscribe(s -> {}, e -> {}));
        }
        Await.until("two receives pending", Duration.ofSeconds(10), () -> budget.channelCalls().open() == 2);
        assertThat(budget.memory().held(Retained.CHANNEL_CALLS)).isEqualTo(2 * ServiceBudget.CHANNEL_CALL_BYTES);
        http().post().uri("/api/v1/channels/calls/send").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"value\":1}").exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().valueEquals("Retry-After", "1")
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:too-many-open")
                .jsonPath("$.limit").isEqualTo("gosched.api.admission.max-pending-channel-calls")
                .jsonPath("$.max").isEqualTo(2);
        waiting.forEach(Disposable::dispose);
        Await.until("the hung-up receives end", Duration.ofSeconds(10), () -> budget.channelCalls().open() == 0);
        http().post().uri("/api/v1/channels/calls/recv").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"timeoutMs\":0}").exchange()
                .expectStatus().isOk();
        // The call's place is given back in doFinally, which runs after the answer was written: the
        // client can read it a moment before the bytes come back.
        Await.until("the last receive's call released", Duration.ofSeconds(10),
                () -> budget.memory().held(Retained.CHANNEL_CALLS) == 0 && budget.channelCalls().open() == 0);
    }

    @Test
    void jobEventStreamsBeyondTheOpenBoundAre429AndTheLimitsViewShowsThem() {
        JsonNode job = http().post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":20000}]}}").exchange().expectStatus().isAccepted()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        String id = job.get("id").asString();
        Disposable open = async().get().uri("/api/v1/jobs/{id}/events", id).accept(MediaType.TEXT_EVENT_STREAM).retrieve()
                .bodyToFlux(String.class).subscribe(s -> {}, e -> {});
        Await.until("one stream open", Duration.ofSeconds(10), () -> budget.streams().open() == 1);
        http().get().uri("/api/v1/jobs/{id}/events", id).accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:too-many-open")
                .jsonPath("$.limit").isEqualTo("gosched.api.admission.max-open-streams")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains("1 SSE streams"));
        JsonNode limits = http().get().uri("/api/v1/limits").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(limits.at("/streams/open").asInt()).isEqualTo(1);
        assertThat(limits.at("/streams/max").asInt()).isEqualTo(1);
        assertThat(limits.at("/channelCalls/property").asString()).isEqualTo("gosched.api.admission.max-pending-channel-calls");
        assertThat(limits.at("/memory/maxBytes").asLong()).isEqualTo(budget.memory().max());
        assertThat(limits.at("/memory/maxChannelBytes").asLong()).isEqualTo(65536);
        assertThat(limits.at("/memory/heldBy/streams").asLong()).isEqualTo(ServiceBudget.STREAM_BYTES);
        assertThat(limits.at("/memory/heldBy/running_jobs").asLong()).isPositive();
        open.dispose();
        Await.until("the stream closed", Duration.ofSeconds(10), () -> budget.streams().open() == 0);
        http().delete().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().is2xxSuccessful();
    }
}
