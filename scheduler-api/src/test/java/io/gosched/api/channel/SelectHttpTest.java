package io.gosched.api.channel;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

import io.gosched.api.testapp.TestApplication;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.ChannelView;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * POST /api/v1/select over real HTTP on the runtime's select: bad input answers a problem naming
 * the case, a ready case fires, the choice among ready cases is uniform, and a select that ends
 * without firing (timeout, client gone) leaves every channel as it was.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"gosched.api.channels.max-timeout-ms=20000", "gosched.api.channels.default-timeout-ms=300",
                "gosched.api.limits.max-channel-bytes=65536", "gosched.api.admission.max-pending-channel-calls=4"})
class SelectHttpTest {

    @LocalServerPort
    int port;

    @Autowired
    ChannelService channels;

    @Autowired
    ServiceBudget budget;

    private WebTestClient http() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(30)).build();
    }

    private WebTestClient.ResponseSpec post(String uri, String json) {
        return http().post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange();
    }

    private String channel(int capacity) {
        String name = "sel-" + UUID.randomUUID().toString().substring(0, 8);
        post("/api/v1/channels", "{\"name\":\"" + name + "\",\"capacity\":" + capacity + "}").expectStatus().isCreated();
        return name;
    }

    private JsonNode select(String json) {
        return post("/api/v1/select", json).expectStatus().isOk().expectBody(JsonNode.class).returnResult().getResponseBody();
    }

    private ChannelView view(String name) {
        return channels.describe(name).block(Duration.ofSeconds(5));
    }

    private static void await(String what, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!cond.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(end);
            Thread.sleep(5);
        }
    }

    private void invalid(String json, String pointer, String detail) {
        post("/api/v1/select", json).expectStatus().isEqualTo(422)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                .jsonPath("$.errors[0].pointer").isEqualTo(pointer)
                .jsonPath("$.errors[0].detail").value(d -> assertThat((String) d).contains(detail));
    }

    @Test
    void badInputIs422NamingTheCaseAndTouchesNoChannel() {
        String a = channel(1);
        post("/api/v1/channels/" + a + "/send", "{\"value\":1}").expectStatus().isOk();
        invalid("{\"cases\":[]}", "/cases", "size must be between 1 and 64");
        invalid("{}", "/cases", "must not be null");
        invalid("{\"cases\":[" + "{\"recv\":\"x\"},".repeat(64) + "{\"recv\":\"x\"}]}", "/cases", "size must be between 1 and 64");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\",\"send\":\"" + a + "\",\"value\":1}]}", "/cases/0/send", "not both");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\"},{}]}", "/cases/1", "must have \"recv\"");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\"},{\"recv\":\"" + a + "\"},{\"send\":\"" + a + "\"}]}", "/cases/2/value", "is required");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\",\"value\":3}]}", "/cases/0/value", "only a send case");
        invalid("{\"cases\":[{\"recv\":\"bad name!\"}]}", "/cases/0/recv", "must match");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\"}],\"timeoutMs\":20001}", "/timeoutMs", "must be between 0 and 20000, was 20001");
        invalid("{\"cases\":[{\"recv\":\"" + a + "\"}],\"timeoutMs\":-1}", "/timeoutMs", "must be between 0 and 20000, was -1");
        // every bad case is named, not only the first
        post("/api/v1/select", "{\"cases\":[{},{\"recv\":\"" + a + "\"},{\"send\":\"" + a + "\"}]}").expectStatus().isEqualTo(422)
                .expectBody().jsonPath("$.errors.length()").isEqualTo(2)
                .jsonPath("$.errors[1].pointer").isEqualTo("/cases/2/value");
        // a channel no node has is the single operations' 404, and nothing else was taken
        post("/api/v1/select", "{\"cases\":[{\"recv\":\"" + a + "\"},{\"recv\":\"no-such-chan\"}]}").expectStatus().isNotFound()
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:not-found")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains("no-such-chan"));
        assertThat(view(a).len()).as("the value is still in the channel").isEqualTo(1);
    }

    @Test
    void aReadyCaseFiresAndTheOthersAreUntouched() {
        String in = channel(2);
        String out = channel(0); // unbuffered, nobody receives: the send case cannot proceed
        post("/api/v1/channels/" + in + "/send", "{\"value\":{\"n\":7}}").expectStatus().isOk();
        JsonNode r = select("{\"cases\":[{\"send\":\"" + out + "\",\"value\":1},{\"recv\":\"" + in + "\"}],\"timeoutMs\":2000}");
        assertThat(r.get("index").asInt()).isEqualTo(1);
        assertThat(r.get("value").get("n").asInt()).isEqualTo(7);
        assertThat(r.get("ok").asBoolean()).isTrue();
        assertThat(r.has("timedOut")).isFalse();
        assertThat(view(out).waitingSenders()).isZero();

        // a send case that can proceed fires, answering its index and no value; the value is in the channel
        JsonNode s = select("{\"cases\":[{\"recv\":\"" + out + "\"},{\"send\":\"" + in + "\",\"value\":null}]}");
        assertThat(s.get("index").asInt()).isEqualTo(1);
        assertThat(s.has("value")).as("a send answers no value").isFalse();
        post("/api/v1/channels/" + in + "/recv", "{}").expectStatus().isOk().expectBody()
                .jsonPath("$.received").isEqualTo(true).jsonPath("$.value").isEmpty();

        // a receive from a closed, drained channel fires with ok=false (v, ok := <-ch)
        post("/api/v1/channels/" + in + "/close", "").expectStatus().isOk();
        JsonNode c = select("{\"cases\":[{\"recv\":\"" + out + "\"},{\"recv\":\"" + in + "\"}]}");
        assertThat(c.get("index").asInt()).isEqualTo(1);
        assertThat(c.get("ok").asBoolean()).isFalse();
        assertThat(c.get("value").isNull()).isTrue();
    }

    @Test
    void aChannelMayRepeatAcrossCasesAsInGo() {
        String a = channel(2);
        post("/api/v1/channels/" + a + "/send", "{\"value\":1}").expectStatus().isOk();
        JsonNode r = select("{\"cases\":[{\"recv\":\"" + a + "\"},{\"recv\":\"" + a + "\"},{\"send\":\"" + a + "\",\"value\":2}]}");
        assertThat(r.get("index").asInt()).isBetween(0, 2);
        // one case fired: a receive took the 1 (empty now), or the send added a 2 (two buffered)
        assertThat(view(a).len()).isEqualTo(r.get("index").asInt() == 2 ? 2 : 0);
    }

    @Test
    void theLimitsAnswerTheSingleOperations429sAndKeepNothing() throws Exception {
        String a = channel(16);
        String b = channel(0);
        // fill channel a's share (64 KiB here) with buffered values until a plain send is refused
        String big = "x".repeat(12_000);
        int buffered = 0;
        while (post("/api/v1/channels/" + a + "/send", "{\"value\":\"" + big + "\",\"timeoutMs\":0}").returnResult(String.class)
                .getStatus().value() == 200) {
            buffered++;
            assertThat(buffered).as("the share fills up").isLessThan(16);
        }
        long pendingBefore = budget.memory().held(Retained.PENDING_SENDS);
        // a select's send of such a value is refused the same way, before anything is kept
        post("/api/v1/select", "{\"cases\":[{\"recv\":\"" + b + "\"},{\"send\":\"" + a + "\",\"value\":\"" + big + "\"}]}")
                .expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:memory-budget");
        assertThat(view(a).len()).isEqualTo(buffered);
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).isEqualTo(pendingBefore);

        // a waiting select holds one place of max-pending-channel-calls (4 here): a fifth call is refused
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        java.util.List<Disposable> waiting = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(client.post().uri("/api/v1/select").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"cases\":[{\"recv\":\"" + b + "\"},{\"recv\":\"" + b + "\"}],\"timeoutMs\":15000}")
                    .retrieve().bodyToMono(JsonNode.class).subscribe());
        }
        await("four selects wait", () -> budget.channelCalls().open() == 4);
        post("/api/v1/select", "{\"cases\":[{\"recv\":\"" + a + "\"}],\"timeoutMs\":100}").expectStatus().isEqualTo(429)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:too-many-open");
        waiting.forEach(Disposable::dispose);
        await("their places are free again", () -> budget.channelCalls().open() == 0 && view(b).waitingReceivers() == 0);
    }

    @Test
    void aSelectThatWaitsFiresWhenAPartnerComes() throws Exception {
        String a = channel(0);
        String b = channel(0);
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        var pending = client.post().uri("/api/v1/select").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cases\":[{\"recv\":\"" + a + "\"},{\"recv\":\"" + b + "\"}],\"timeoutMs\":15000}")
                .retrieve().bodyToMono(JsonNode.class).toFuture();
        await("the select waits on both", () -> view(a).waitingReceivers() == 1 && view(b).waitingReceivers() == 1);
        post("/api/v1/channels/" + b + "/send", "{\"value\":\"hi\",\"timeoutMs\":5000}").expectStatus().isOk()
                .expectBody().jsonPath("$.sent").isEqualTo(true);
        JsonNode r = pending.get();
        assertThat(r.get("index").asInt()).isEqualTo(1);
        assertThat(r.get("value").asString()).isEqualTo("hi");
        await("the losing case left its channel", () -> view(a).waitingReceivers() == 0);
    }

    @Test
    void sendOnAClosedChannelIsTheSendEndpointsConflict() {
        String closed = channel(1);
        String empty = channel(0);
        post("/api/v1/channels/" + closed + "/close", "").expectStatus().isOk();
        long pendingBefore = budget.memory().held(Retained.PENDING_SENDS);
        post("/api/v1/select", "{\"cases\":[{\"recv\":\"" + empty + "\"},{\"send\":\"" + closed + "\",\"value\":1}],\"timeoutMs\":1000}")
                .expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.type").isEqualTo("urn:gosched:problem:channel-closed")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains(closed));
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).as("the refused value's charge went back").isEqualTo(pendingBefore);
    }

    /** Go's selectFairness over HTTP: both cases always ready, each must win about half the time. */
    @Test
    void theChoiceAmongReadyCasesIsUniform() {
        int n = 400;
        String a = channel(n);
        String b = channel(n);
        for (int i = 0; i < n; i++) {
            channels.registry().send(a, tools.jackson.databind.node.IntNode.valueOf(i)).join();
            channels.registry().send(b, tools.jackson.databind.node.IntNode.valueOf(i)).join();
        }
        int first = 0;
        for (int i = 0; i < n; i++) {
            JsonNode r = select("{\"cases\":[{\"recv\":\"" + a + "\"},{\"recv\":\"" + b + "\"}],\"timeoutMs\":1000}");
            first += r.get("index").asInt() == 0 ? 1 : 0;
        }
        // binomial(400, 0.5): sd 10; 6 sd either side fails a fair coin about once in 10^9 runs
        assertThat(first).as("case 0 chosen of %d", n).isBetween(140, 260);
        assertThat(view(a).len() + view(b).len()).isEqualTo(n);
    }

    @Test
    void aTimeoutFiresNothingAndLeavesEveryChannelAsItWas() {
        String in = channel(0);
        String out = channel(1);
        post("/api/v1/channels/" + out + "/send", "{\"value\":\"full\"}").expectStatus().isOk(); // buffer full: the send case blocks
        long pendingBefore = budget.memory().held(Retained.PENDING_SENDS);
        JsonNode r = select("{\"cases\":[{\"recv\":\"" + in + "\"},{\"send\":\"" + out + "\",\"value\":\"extra\"}],\"timeoutMs\":150}");
        assertThat(r.get("timedOut").asBoolean()).isTrue();
        assertThat(r.get("reason").asString()).isEqualTo("timeout");
        assertThat(r.has("index")).isFalse();
        // the default wait applies without timeoutMs (300 ms here): it ends, timed out
        assertThat(select("{\"cases\":[{\"recv\":\"" + in + "\"}]}").get("timedOut").asBoolean()).isTrue();
        // nothing waits on either channel any more, the extra value was never sent, its charge went back
        ChannelView iv = view(in);
        ChannelView ov = view(out);
        assertThat(iv.waitingReceivers()).isZero();
        assertThat(ov.waitingSenders()).isZero();
        assertThat(ov.len()).isEqualTo(1);
        post("/api/v1/channels/" + out + "/recv", "{}").expectBody().jsonPath("$.value").isEqualTo("full");
        post("/api/v1/channels/" + out + "/recv", "{\"timeoutMs\":50}").expectBody().jsonPath("$.received").isEqualTo(false);
        post("/api/v1/channels/" + in + "/send", "{\"value\":1,\"timeoutMs\":50}").expectBody().jsonPath("$.sent").isEqualTo(false);
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).isEqualTo(pendingBefore);
    }

    @Test
    void aClientThatGoesAwayMidWaitConsumesNothing() throws Exception {
        String in = channel(0);
        String out = channel(0);
        WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port).build();
        Disposable gone = client.post().uri("/api/v1/select").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cases\":[{\"recv\":\"" + in + "\"},{\"send\":\"" + out + "\",\"value\":\"ghost\"}],\"timeoutMs\":15000}")
                .retrieve().bodyToMono(JsonNode.class).subscribe();
        await("the select waits on both", () -> view(in).waitingReceivers() == 1 && view(out).waitingSenders() == 1);
        gone.dispose(); // the client hangs up
        await("the select left both channels", () -> view(in).waitingReceivers() == 0 && view(out).waitingSenders() == 0);
        // nobody takes a value sent now, nobody offers one: the select neither receives nor sends any more
        post("/api/v1/channels/" + in + "/send", "{\"value\":1,\"timeoutMs\":200}").expectBody().jsonPath("$.sent").isEqualTo(false);
        post("/api/v1/channels/" + out + "/recv", "{\"timeoutMs\":200}").expectBody().jsonPath("$.received").isEqualTo(false);
        await("no channel call stays open", () -> budget.channelCalls().open() == 0);
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).as("the unsent value's charge went back").isZero();
    }
}
