package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.testing.NatsServer;
import io.gosched.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * POST /api/v1/select across two service nodes (each its own JVM) on a real nats-server: a select
 * whose channels all live on the other node (forwarded there as one select), and one whose
 * channels live on both (rounds of non-blocking attempts), still fire exactly one case and leave
 * the others untouched, also when the client hangs up.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterSelectTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;
    NatsServer nats;
    ServiceNode a;
    ServiceNode b;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static final Path LOGS = Path.of("target", "cluster-select-test");

    @BeforeAll
    void startCluster() throws Exception {
        java.nio.file.Files.createDirectories(LOGS);
        nats = NatsServer.start(dir.resolve("nats"));
        CompletableFuture<ServiceNode> sa = CompletableFuture.supplyAsync(() -> ServiceNode.start(LOGS, "sel-a", nats.url()));
        CompletableFuture<ServiceNode> sb = CompletableFuture.supplyAsync(() -> ServiceNode.start(LOGS, "sel-b", nats.url()));
        a = sa.get(330, TimeUnit.SECONDS);
        b = sb.get(330, TimeUnit.SECONDS);
    }

    @AfterAll
    void stopCluster() {
        for (ServiceNode n : new ServiceNode[] {a, b}) {
            if (n != null) {
                n.close();
            }
        }
        if (nats != null) {
            nats.close();
        }
    }

    record Answer(int status, JsonNode body) {}

    CompletableFuture<Answer> callAsync(ServiceNode node, String method, String path, Object body) {
        HttpRequest.BodyPublisher pub = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body));
        HttpRequest req = HttpRequest.newBuilder(URI.create(node.baseUrl() + path)).method(method, pub)
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60)).build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> new Answer(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body())));
    }

    Answer call(ServiceNode node, String method, String path, Object body) {
        try {
            return callAsync(node, method, path, body).get(70, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + " on " + node.id() + ": " + e, e);
        }
    }

    void create(ServiceNode node, String name, int capacity) {
        assertThat(call(node, "POST", "/api/v1/channels", Map.of("name", name, "capacity", capacity)).status()).isEqualTo(201);
    }

    JsonNode state(ServiceNode node, String name) {
        return call(node, "GET", "/api/v1/channels/" + name, null).body();
    }

    static Map<String, Object> select(long timeoutMs, Object... cases) {
        return Map.of("cases", List.of(cases), "timeoutMs", timeoutMs);
    }

    static Map<String, Object> recvCase(String ch) {
        return Map.of("recv", ch);
    }

    static Map<String, Object> sendCase(String ch, Object value) {
        return Map.of("send", ch, "value", value);
    }

    static void await(String what, Supplier<Boolean> condition) {
        Await.untilPasses(what, Duration.ofSeconds(60), () -> assertThat(condition.get()).as(what).isTrue());
    }

    @Test
    void aSelectOnChannelsOfTheOtherNodeFiresOneCaseAndTimesOutClean() throws Exception {
        create(a, "far-in", 2);
        create(a, "far-out", 0);
        // nothing ready: the select on b times out and leaves both of a's channels untouched
        Answer none = call(b, "POST", "/api/v1/select", select(300, recvCase("far-in"), sendCase("far-out", "never")));
        assertThat(none.status()).as("%s", none.body()).isEqualTo(200);
        assertThat(none.body().path("timedOut").asBoolean()).isTrue();
        assertThat(state(a, "far-out").path("waitingSenders").asInt()).isZero();
        Answer nobody = call(a, "POST", "/api/v1/channels/far-out/recv", Map.of("timeoutMs", 200));
        assertThat(nobody.body().path("received").asBoolean()).as("the send case never sent").isFalse();

        // a value that arrives while the select waits fires its receive case, and only it
        CompletableFuture<Answer> waiting = callAsync(b, "POST", "/api/v1/select", select(20_000, recvCase("far-in"), sendCase("far-out", "x")));
        Thread.sleep(300);
        assertThat(call(a, "POST", "/api/v1/channels/far-in/send", Map.of("value", 42)).body().path("sent").asBoolean()).isTrue();
        Answer got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got.body().path("index").asInt()).as("%s", got.body()).isZero();
        assertThat(got.body().path("value").asInt()).isEqualTo(42);
        assertThat(got.body().path("ok").asBoolean()).isTrue();
        assertThat(state(a, "far-in").path("len").asInt()).isZero();
        assertThat(call(a, "POST", "/api/v1/channels/far-out/recv", Map.of("timeoutMs", 200)).body().path("received").asBoolean())
                .as("the send case that lost never sent").isFalse();

        // a send case on the other node fires when a receiver waits there
        CompletableFuture<Answer> receiver = callAsync(a, "POST", "/api/v1/channels/far-out/recv", Map.of("timeoutMs", 20_000));
        await("a's receiver waits", () -> state(a, "far-out").path("waitingReceivers").asInt() == 1);
        Answer sent = call(b, "POST", "/api/v1/select", select(5000, recvCase("far-in"), sendCase("far-out", Map.of("k", "v"))));
        assertThat(sent.body().path("index").asInt()).as("%s", sent.body()).isEqualTo(1);
        assertThat(receiver.get(30, TimeUnit.SECONDS).body().path("value").path("k").asString()).isEqualTo("v");

        // unknown channels and a send on a closed one answer as the single operations do
        assertThat(call(b, "POST", "/api/v1/select", select(100, recvCase("far-in"), recvCase("nowhere"))).status()).isEqualTo(404);
        call(a, "POST", "/api/v1/channels/far-out/close", null);
        Answer closed = call(b, "POST", "/api/v1/select", select(1000, sendCase("far-out", 1)));
        assertThat(closed.status()).isEqualTo(409);
        assertThat(closed.body().path("type").asString()).isEqualTo("urn:gosched:problem:channel-closed");
    }

    /** Forwarded as one select, it waits at the home as Go's select does: two such selects meet there. */
    @Test
    void twoSelectsOnTheOtherNodesChannelMeetAtItsHome() throws Exception {
        create(a, "meet", 0);
        CompletableFuture<Answer> receiver = callAsync(b, "POST", "/api/v1/select", select(20_000, recvCase("meet")));
        await("the forwarded select waits at the home", () -> state(a, "meet").path("waitingReceivers").asInt() == 1);
        Answer sender = call(b, "POST", "/api/v1/select", select(10_000, sendCase("meet", "hello")));
        assertThat(sender.body().path("index").asInt()).as("%s", sender.body()).isZero();
        Answer got = receiver.get(30, TimeUnit.SECONDS);
        assertThat(got.body().path("value").asString()).as("%s", got.body()).isEqualTo("hello");
    }

    @Test
    void aClientThatHangsUpOnAForwardedSelectConsumesNothing() throws Exception {
        create(a, "hangup-in", 0);
        create(a, "hangup-out", 0);
        CompletableFuture<Answer> gone = callAsync(b, "POST", "/api/v1/select",
                select(30_000, recvCase("hangup-in"), sendCase("hangup-out", "ghost")));
        await("the select waits at the home", () -> state(a, "hangup-in").path("waitingReceivers").asInt() == 1
                && state(a, "hangup-out").path("waitingSenders").asInt() == 1);
        gone.cancel(true); // the client hangs up
        // well before its own 30 s timeout would end it
        Await.untilPasses("the home's select ended", Duration.ofSeconds(10), () -> assertThat(
                state(a, "hangup-in").path("waitingReceivers").asInt() + state(a, "hangup-out").path("waitingSenders").asInt()).isZero());
        assertThat(call(a, "POST", "/api/v1/channels/hangup-in/send", Map.of("value", 1, "timeoutMs", 300)).body().path("sent").asBoolean())
                .as("nobody receives any more").isFalse();
        assertThat(call(a, "POST", "/api/v1/channels/hangup-out/recv", Map.of("timeoutMs", 300)).body().path("received").asBoolean())
                .as("nobody sends any more").isFalse();
    }

    @Test
    void aSelectSpanningBothNodesReceivesEveryValueExactlyOnce() throws Exception {
        create(a, "span-a", 0);
        create(b, "span-b", 4);
        int n = 200;
        Map<Integer, Integer> got = new ConcurrentHashMap<>();
        AtomicInteger sent = new AtomicInteger();
        List<CompletableFuture<?>> producers = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            int first = p;
            producers.add(CompletableFuture.runAsync(() -> {
                for (int i = first; i < n; i += 4) {
                    ServiceNode via = i % 2 == 0 ? a : b;
                    String ch = i % 3 == 0 ? "span-b" : "span-a";
                    Answer r = call(via, "POST", "/api/v1/channels/" + ch + "/send", Map.of("value", i, "timeoutMs", 30_000));
                    assertThat(r.body().path("sent").asBoolean()).as("send of %d: %s", i, r.body()).isTrue();
                    sent.incrementAndGet();
                }
            }));
        }
        List<CompletableFuture<?>> consumers = new ArrayList<>();
        for (int k = 0; k < 6; k++) {
            ServiceNode via = k % 2 == 0 ? a : b;
            consumers.add(CompletableFuture.runAsync(() -> {
                while (got.values().stream().mapToInt(Integer::intValue).sum() < n) {
                    Answer r = call(via, "POST", "/api/v1/select", select(500, recvCase("span-a"), recvCase("span-b")));
                    assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
                    if (r.body().has("index")) {
                        got.merge(r.body().path("value").asInt(), 1, Integer::sum);
                    }
                }
            }));
        }
        CompletableFuture.allOf(producers.toArray(CompletableFuture[]::new)).get(240, TimeUnit.SECONDS);
        CompletableFuture.allOf(consumers.toArray(CompletableFuture[]::new)).get(240, TimeUnit.SECONDS);
        assertThat(sent.get()).isEqualTo(n);
        assertThat(got.entrySet().stream().filter(e -> e.getValue() != 1).toList()).as("values received twice").isEmpty();
        assertThat(got.keySet()).hasSize(n);
        assertThat(state(a, "span-a").path("waitingReceivers").asInt()).isZero();
        assertThat(state(b, "span-b").path("len").asInt()).isZero();
    }
}
