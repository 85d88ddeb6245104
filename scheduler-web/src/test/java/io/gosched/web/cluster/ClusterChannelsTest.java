package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.testing.Await;
import io.gosched.cluster.testing.NatsServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Named channels across three service nodes, each its own JVM started as a user starts the
 * service, over real HTTP, with a real nats-server: what a client sees when the channel it
 * talks to lives on another node. The home is SIGKILLed last, so the tests run in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterChannelsTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;
    NatsServer nats;
    ServiceNode a;
    ServiceNode b;
    ServiceNode c;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** The nodes' logs stay after the run (target/), for a failure to be read. */
    static final Path LOGS = Path.of("target", "cluster-channels-test");

    @BeforeAll
    void startCluster() throws Exception {
        java.nio.file.Files.createDirectories(LOGS);
        nats = NatsServer.start(dir.resolve("nats"));
        // Three JVMs starting at once share the cores; in parallel it is still the shortest wait.
        List<CompletableFuture<ServiceNode>> starting = new ArrayList<>();
        for (String id : List.of("web-a", "web-b", "web-c")) {
            starting.add(CompletableFuture.supplyAsync(() -> ServiceNode.start(LOGS, id, nats.url())));
        }
        a = starting.get(0).get(330, TimeUnit.SECONDS);
        b = starting.get(1).get(330, TimeUnit.SECONDS);
        c = starting.get(2).get(330, TimeUnit.SECONDS);
    }

    @AfterAll
    void stopCluster() {
        for (ServiceNode n : new ServiceNode[] {a, b, c}) {
            if (n != null) {
                n.close();
            }
        }
        if (nats != null) {
            nats.close();
        }
    }

    /** One HTTP answer: status, Retry-After, body as JSON (null if none). */
    record Answer(int status, String retryAfter, JsonNode body) {}

    CompletableFuture<Answer> callAsync(ServiceNode node, String method, String path, Object body, Duration timeout) {
        HttpRequest.BodyPublisher pub = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body));
        HttpRequest req = HttpRequest.newBuilder(URI.create(node.baseUrl() + path)).method(method, pub)
                .header("Content-Type", "application/json").timeout(timeout).build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofString()).thenApply(r -> new Answer(r.statusCode(),
                r.headers().firstValue("Retry-After").orElse(null), r.body().isEmpty() ? null : JSON.readTree(r.body())));
    }

    Answer call(ServiceNode node, String method, String path, Object body) {
        try {
            return callAsync(node, method, path, body, Duration.ofSeconds(60)).get(70, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + " on " + node.id() + ": " + e, e);
        }
    }

    Answer create(ServiceNode node, String name, int capacity) {
        return call(node, "POST", "/api/v1/channels", Map.of("name", name, "capacity", capacity));
    }

    static Map<String, Object> send(Object value, long timeoutMs) {
        return Map.of("value", value, "timeoutMs", timeoutMs);
    }

    static Map<String, Object> recv(long timeoutMs) {
        return Map.of("timeoutMs", timeoutMs);
    }

    @Test
    @Order(1)
    void aRecvOnOneNodeMeetsASendOnAnotherOnAnUnbufferedChannelExactlyOnce() throws Exception {
        assertThat(create(a, "rendezvous", 0).status()).isEqualTo(201);
        Answer dup = create(b, "rendezvous", 4);
        assertThat(dup.status()).as("the name is taken cluster-wide: %s", dup.body()).isEqualTo(409);
        assertThat(dup.body().path("channel").asString()).isEqualTo("rendezvous");

        // Unbuffered: with nobody receiving, a send cannot complete, and is withdrawn.
        Answer alone = call(a, "POST", "/api/v1/channels/rendezvous/send", send("too early", 300));
        assertThat(alone.body().path("sent").asBoolean()).isFalse();

        CompletableFuture<Answer> waiting = callAsync(b, "POST", "/api/v1/channels/rendezvous/recv", recv(20_000), Duration.ofSeconds(40));
        await("b's receive waits at the home", () -> call(a, "GET", "/api/v1/channels/rendezvous", null).body()
                .path("waitingReceivers").asInt() == 1);
        Answer sent = call(a, "POST", "/api/v1/channels/rendezvous/send", send(Map.of("hello", "from a"), 5000));
        assertThat(sent.body().path("sent").asBoolean()).isTrue();
        Answer got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got.status()).isEqualTo(200);
        assertThat(got.body().path("received").asBoolean()).isTrue();
        assertThat(got.body().path("value").path("hello").asString()).isEqualTo("from a");

        Answer again = call(c, "POST", "/api/v1/channels/rendezvous/recv", recv(300));
        assertThat(again.body().path("received").asBoolean()).as("the value was delivered once: nothing is left").isFalse();

        for (ServiceNode n : List.of(a, b, c)) {
            JsonNode seen = call(n, "GET", "/api/v1/channels/rendezvous", null).body();
            assertThat(seen.path("node").asString()).as("GET on %s", n.id()).isEqualTo("web-a");
            assertThat(seen.path("capacity").asInt()).isZero();
        }
    }

    @Test
    @Order(2)
    void everyNodeListsEveryChannelWithItsHome() {
        assertThat(create(b, "listed-b", 2).status()).isEqualTo(201);
        assertThat(create(c, "listed-c", 3).status()).isEqualTo(201);
        call(c, "POST", "/api/v1/channels/listed-c/send", send(7, 1000));
        for (ServiceNode n : List.of(a, b, c)) {
            Map<String, JsonNode> byName = new ConcurrentHashMap<>();
            call(n, "GET", "/api/v1/channels", null).body().forEach(ch -> byName.put(ch.path("name").asString(), ch));
            assertThat(byName).as("the list on %s", n.id()).containsKeys("rendezvous", "listed-b", "listed-c");
            assertThat(byName.get("rendezvous").path("node").asString()).isEqualTo("web-a");
            assertThat(byName.get("listed-b").path("node").asString()).isEqualTo("web-b");
            assertThat(byName.get("listed-c").path("node").asString()).isEqualTo("web-c");
            assertThat(byName.get("listed-c").path("len").asInt()).as("the live state, from the home").isEqualTo(1);
        }
        // close and delete from a node that is not the home
        assertThat(call(a, "POST", "/api/v1/channels/listed-c/close", null).body().path("closed").asBoolean()).isTrue();
        assertThat(call(b, "POST", "/api/v1/channels/listed-c/close", null).status()).as("closed already").isEqualTo(409);
        assertThat(call(a, "DELETE", "/api/v1/channels/listed-c", null).status()).isEqualTo(204);
        assertThat(call(c, "GET", "/api/v1/channels/listed-c", null).status()).isEqualTo(404);
        assertThat(create(a, "listed-c", 0).status()).as("a deleted name is free again, on any node").isEqualTo(201);
        assertThat(call(c, "DELETE", "/api/v1/channels/listed-c", null).status()).isEqualTo(204);
    }

    @Test
    @Order(3)
    void twoThousandValuesThroughThreeNodesAreEachReceivedExactlyOnce() throws Exception {
        assertThat(create(b, "many", 8).status()).isEqualTo(201);
        int values = 2000;
        List<ServiceNode> nodes = List.of(a, b, c);
        Random rnd = new Random(12);
        Map<Integer, Boolean> answeredSent = new ConcurrentHashMap<>();
        Map<Integer, AtomicInteger> received = new ConcurrentHashMap<>();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<Supplier<CompletableFuture<?>>> ops = new ArrayList<>();
        for (int i = 0; i < values; i++) {
            int v = i;
            ServiceNode sender = nodes.get(rnd.nextInt(3));
            ServiceNode receiver = nodes.get(rnd.nextInt(3));
            ops.add(() -> callAsync(sender, "POST", "/api/v1/channels/many/send", send(v, 30_000), Duration.ofSeconds(60))
                    .thenAccept(r -> {
                        if (r.status() != 200) {
                            errors.add("send " + v + " on " + sender.id() + ": " + r.status() + " " + r.body());
                        } else {
                            answeredSent.put(v, r.body().path("sent").asBoolean());
                        }
                    }));
            ops.add(() -> callAsync(receiver, "POST", "/api/v1/channels/many/recv", recv(30_000), Duration.ofSeconds(60))
                    .thenAccept(r -> count(r, received, errors, receiver)));
        }
        Collections.shuffle(ops, rnd);
        Semaphore inFlight = new Semaphore(200);
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (Supplier<CompletableFuture<?>> op : ops) {
            inFlight.acquire();
            all.add(op.get().whenComplete((x, e) -> {
                inFlight.release();
                if (e != null) {
                    errors.add(e.toString());
                }
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
        // A receive that timed out under load leaves its value in the channel: drain it.
        while (true) {
            Answer r = call(b, "POST", "/api/v1/channels/many/recv", recv(500));
            if (!r.body().path("received").asBoolean()) {
                break;
            }
            count(r, received, errors, b);
        }
        assertThat(errors).as("HTTP errors").isEmpty();
        assertThat(answeredSent).as("every send was answered").hasSize(values);
        Set<Integer> sent = new HashSet<>();
        Set<Integer> withdrawn = new HashSet<>();
        answeredSent.forEach((v, ok) -> (ok ? sent : withdrawn).add(v));
        List<Integer> twice = received.entrySet().stream().filter(e -> e.getValue().get() > 1).map(Map.Entry::getKey).toList();
        assertThat(twice).as("values received more than once").isEmpty();
        assertThat(received.keySet().stream().filter(withdrawn::contains).toList()).as("values answered sent:false must never arrive")
                .isEmpty();
        assertThat(received.keySet()).as("values answered sent:true must arrive").containsAll(sent);
        assertThat(sent).as("with 30 s timeouts every send goes through").hasSize(values);
    }

    private static void count(Answer r, Map<Integer, AtomicInteger> received, List<String> errors, ServiceNode on) {
        if (r.status() != 200) {
            errors.add("recv on " + on.id() + ": " + r.status() + " " + r.body());
        } else if (r.body().path("received").asBoolean() && r.body().path("ok").asBoolean()) {
            received.computeIfAbsent(r.body().path("value").asInt(), k -> new AtomicInteger()).incrementAndGet();
        }
    }

    @Test
    @Order(4)
    void withNatsStoppedTheClusterAnswers503WithRetryAfterAndWorksAgainWhenItIsBack() throws InterruptedException {
        assertThat(create(a, "through-outage", 4).status()).isEqualTo(201);
        nats.kill();
        try {
            await("b sees NATS down", () -> call(b, "GET", "/actuator/health", null).status() == 503);
            Answer made = create(b, "during-outage", 1);
            assertThat(made.status()).as("%s", made.body()).isEqualTo(503);
            assertThat(made.retryAfter()).isNotBlank();
            assertThat(made.body().path("type").asString()).endsWith("backend-unavailable");
            Answer sent = call(b, "POST", "/api/v1/channels/through-outage/send", send("during", 1000));
            assertThat(sent.status()).as("a send to a channel of another node: %s", sent.body()).isEqualTo(503);
            assertThat(sent.retryAfter()).isNotBlank();
            Answer listed = call(c, "GET", "/api/v1/channels", null);
            assertThat(listed.status()).isEqualTo(503);
            assertThat(call(b, "GET", "/api/v1/channels/during-outage", null).status()).isEqualTo(503);
        } finally {
            nats.restart();
        }
        await("b works again", () -> create(b, "after-outage", 1).status() == 201);
        await("forwarding works again", () -> call(b, "POST", "/api/v1/channels/through-outage/send", send("back", 2000)).status() == 200);
        // A 503 on a send means "outcome unknown": the client's request may have gone out with the
        // reconnect and been delivered, and so may a "back" whose answer was a 503. Never twice each.
        // Each node reconnects on its own: c may still answer 503 for a while after b works again,
        // and that is "try again", not "the channel is empty".
        List<String> drained = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Answer got = call(c, "POST", "/api/v1/channels/through-outage/recv", recv(500));
            if (got.status() == 503 && System.nanoTime() < deadline) {
                assertThat(got.retryAfter()).as("c's 503 says when to try again").isNotBlank();
                Thread.sleep(200);
                continue;
            }
            assertThat(got.status()).as("a receive through c after the outage: %s", got.body()).isEqualTo(200);
            if (!got.body().path("received").asBoolean()) {
                break;
            }
            drained.add(got.body().path("value").asString());
        }
        assertThat(drained).contains("back");
        assertThat(Collections.frequency(drained, "during")).isLessThanOrEqualTo(1);
        assertThat(call(a, "GET", "/api/v1/channels/during-outage", null).status()).as("nothing was made during the outage")
                .isEqualTo(404);
    }

    @Test
    @Order(5)
    void whenTheHomeIsKilledItsChannelAnswers410OnTheOtherNodesNeverAHang() throws Exception {
        assertThat(create(a, "doomed", 0).status()).isEqualTo(201);
        CompletableFuture<Answer> waiting = callAsync(b, "POST", "/api/v1/channels/doomed/recv", recv(30_000), Duration.ofSeconds(60));
        await("b's receive waits at the home", () -> {
            assertThat(waiting.isDone()).as("b's receive answered early: %s", waiting.isDone() ? waiting.join() : null).isFalse();
            return call(a, "GET", "/api/v1/channels/doomed", null).body().path("waitingReceivers").asInt() == 1;
        });
        long killedAt = System.nanoTime();
        a.kill();
        Answer ended = waiting.get(45, TimeUnit.SECONDS);
        assertThat(ended.status()).as("the waiting receive: %s", ended.body()).isEqualTo(410);
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as("ended long before its 30 s timeout").isLessThan(Duration.ofSeconds(20));
        assertThat(ended.body().path("channel").asString()).isEqualTo("doomed");
        assertThat(ended.body().path("detail").asString()).contains("web-a");

        Answer send = call(c, "POST", "/api/v1/channels/doomed/send", send(1, 5000));
        assertThat(send.status()).as("%s", send.body()).isEqualTo(410);
        assertThat(send.body().path("type").asString()).endsWith("channel-lost");
        assertThat(call(b, "GET", "/api/v1/channels/doomed", null).status()).isEqualTo(410);
        assertThat(call(c, "POST", "/api/v1/channels/rendezvous/recv", recv(100)).status()).isEqualTo(410);

        JsonNode list = call(c, "GET", "/api/v1/channels", null).body();
        JsonNode doomed = null;
        for (JsonNode ch : list) {
            if (ch.path("name").asString().equals("doomed")) {
                doomed = ch;
            }
        }
        assertThat(doomed).as("a lost channel is still listed: %s", list).isNotNull();
        assertThat(doomed.path("lost").asBoolean()).isTrue();
        assertThat(doomed.path("node").asString()).isEqualTo("web-a");

        assertThat(call(b, "DELETE", "/api/v1/channels/doomed", null).status()).as("a lost channel can be deleted anywhere").isEqualTo(204);
        assertThat(call(c, "GET", "/api/v1/channels/doomed", null).status()).isEqualTo(404);
        assertThat(create(c, "doomed", 0).status()).as("and its name made again").isEqualTo(201);
    }
    /** Await.untilPasses over a condition whose calls may themselves fail an assertion while the node recovers. */
    static void await(String what, Supplier<Boolean> condition) {
        Await.untilPasses(what, Duration.ofSeconds(60), () -> assertThat(condition.get()).as(what).isTrue());
    }
}
