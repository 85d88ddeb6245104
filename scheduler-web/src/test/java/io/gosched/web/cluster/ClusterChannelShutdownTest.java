package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.testing.NatsServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * A forwarded channel operation while the node that forwarded it shuts down gracefully
 * (SIGTERM): the channel lives on another node and outlives the caller, so the operation keeps
 * waiting through the caller's drain and completes with Go's answer; one that outlasts the drain
 * is withdrawn at the home and answered, with the exactly-once rules intact. Three service nodes,
 * each its own JVM started as a user starts the service, on a real nats-server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterChannelShutdownTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final Path LOGS = Path.of("target", "cluster-channel-shutdown-test");

    @TempDir
    static Path dir;
    NatsServer nats;
    ServiceNode home;
    final List<ServiceNode> callers = new ArrayList<>();
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    void startCluster() throws Exception {
        Files.createDirectories(LOGS);
        nats = NatsServer.start(dir.resolve("nats"));
        List<CompletableFuture<ServiceNode>> starting = new ArrayList<>();
        for (String id : List.of("home", "caller-1", "caller-2", "caller-3")) {
            // the callers' drain is short, so that an operation can outlast it within a test
            String[] extra = id.equals("home") ? new String[0] : new String[] {"--spring.lifecycle.timeout-per-shutdown-phase=8s"};
            starting.add(CompletableFuture.supplyAsync(() -> ServiceNode.start(LOGS, id, nats.url(), extra)));
        }
        home = starting.get(0).get(330, TimeUnit.SECONDS);
        for (int i = 1; i < starting.size(); i++) {
            callers.add(starting.get(i).get(330, TimeUnit.SECONDS));
        }
    }

    @AfterAll
    void stopCluster() {
        for (ServiceNode n : callers) {
            n.close();
        }
        if (home != null) {
            home.close();
        }
        if (nats != null) {
            nats.close();
        }
    }

    record Answer(int status, JsonNode body) {}

    CompletableFuture<Answer> callAsync(ServiceNode node, String method, String path, Object body, Duration timeout) {
        HttpRequest.BodyPublisher pub = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body));
        HttpRequest req = HttpRequest.newBuilder(URI.create(node.baseUrl() + path)).method(method, pub)
                .header("Content-Type", "application/json").timeout(timeout).build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> new Answer(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body())));
    }

    Answer call(ServiceNode node, String method, String path, Object body) {
        try {
            return callAsync(node, method, path, body, Duration.ofSeconds(60)).get(70, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + " on " + node.id() + ": " + e, e);
        }
    }

    void create(String name) {
        Answer made = call(home, "POST", "/api/v1/channels", Map.of("name", name, "capacity", 0));
        assertThat(made.status()).as("%s", made.body()).isEqualTo(201);
    }

    void awaitAtHome(String channel, String field) {
        await(field + " == 1 at the home of " + channel,
                () -> call(home, "GET", "/api/v1/channels/" + channel, null).body().path(field).asInt() == 1);
    }

    /** Nothing is left in the channel: a value is delivered once, never put back as well. */
    void assertEmpty(String channel) {
        Answer left = call(home, "POST", "/api/v1/channels/" + channel + "/recv", Map.of("timeoutMs", 300));
        assertThat(left.body().path("received").asBoolean()).as("left in %s: %s", channel, left.body()).isFalse();
    }

    static void assertExitedCleanly(ServiceNode n) {
        OptionalInt code = n.awaitExit(Duration.ofSeconds(40));
        assertThat(code).as("%s ends its graceful shutdown by itself:\n%s", n.id(), n.logTail()).isPresent();
        assertThat(code.getAsInt()).as("%s's exit code (143: SIGTERM)", n.id()).isIn(0, 143);
    }

    @Test
    @Order(1)
    void aForwardedRecvKeepsWaitingWhileItsNodeShutsDownAndGetsTheValue() throws Exception {
        ServiceNode caller = callers.get(0);
        create("drain-recv");
        CompletableFuture<Answer> waiting = callAsync(caller, "POST", "/api/v1/channels/drain-recv/recv", Map.of("timeoutMs", 20_000),
                Duration.ofSeconds(60));
        awaitAtHome("drain-recv", "waitingReceivers");
        caller.terminate();
        Thread.sleep(2_000); // the caller is draining now
        assertThat(waiting).as("the receive still waits while its node drains").isNotDone();

        Answer sent = call(home, "POST", "/api/v1/channels/drain-recv/send", Map.of("value", "after-sigterm", "timeoutMs", 5_000));
        assertThat(sent.body().path("sent").asBoolean()).as("%s", sent.body()).isTrue();
        Answer got = waiting.get(30, TimeUnit.SECONDS);
        assertThat(got.status()).as("%s", got.body()).isEqualTo(200);
        assertThat(got.body().path("received").asBoolean()).as("%s", got.body()).isTrue();
        assertThat(got.body().path("value").asString()).isEqualTo("after-sigterm");
        assertExitedCleanly(caller);
        assertEmpty("drain-recv");
    }

    @Test
    @Order(2)
    void aForwardedSendKeepsWaitingWhileItsNodeShutsDownAndIsDelivered() throws Exception {
        ServiceNode caller = callers.get(1);
        create("drain-send");
        CompletableFuture<Answer> waiting = callAsync(caller, "POST", "/api/v1/channels/drain-send/send",
                Map.of("value", "sent-while-draining", "timeoutMs", 20_000), Duration.ofSeconds(60));
        awaitAtHome("drain-send", "waitingSenders");
        caller.terminate();
        Thread.sleep(2_000);
        assertThat(waiting).as("the send still waits while its node drains").isNotDone();

        Answer got = call(home, "POST", "/api/v1/channels/drain-send/recv", Map.of("timeoutMs", 5_000));
        assertThat(got.body().path("received").asBoolean()).as("%s", got.body()).isTrue();
        assertThat(got.body().path("value").asString()).isEqualTo("sent-while-draining");
        Answer sent = waiting.get(30, TimeUnit.SECONDS);
        assertThat(sent.status()).as("%s", sent.body()).isEqualTo(200);
        assertThat(sent.body().path("sent").asBoolean()).as("the value was delivered, so it is answered sent: %s", sent.body()).isTrue();
        assertExitedCleanly(caller);
        assertEmpty("drain-send");
    }

    @Test
    @Order(3)
    void operationsThatOutlastTheDrainAreWithdrawnAtTheHomeAndAnswered() throws Exception {
        ServiceNode caller = callers.get(2);
        create("outlast-send");
        create("outlast-recv");
        CompletableFuture<Answer> send = callAsync(caller, "POST", "/api/v1/channels/outlast-send/send",
                Map.of("value", "never-delivered", "timeoutMs", 30_000), Duration.ofSeconds(90));
        CompletableFuture<Answer> recv = callAsync(caller, "POST", "/api/v1/channels/outlast-recv/recv", Map.of("timeoutMs", 30_000),
                Duration.ofSeconds(90));
        awaitAtHome("outlast-send", "waitingSenders");
        awaitAtHome("outlast-recv", "waitingReceivers");
        long asked = System.nanoTime();
        caller.terminate();

        Answer s = send.get(40, TimeUnit.SECONDS);
        Answer r = recv.get(40, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - asked)).as("answered within the drain, not after the 30 s timeout")
                .isLessThan(Duration.ofSeconds(20));
        assertThat(s.status()).as("%s", s.body()).isEqualTo(200);
        assertThat(s.body().path("sent").asBoolean()).as("%s", s.body()).isFalse();
        assertThat(s.body().path("reason").asString()).isEqualTo("shutdown");
        assertThat(r.status()).as("%s", r.body()).isEqualTo(200);
        assertThat(r.body().path("received").asBoolean()).as("%s", r.body()).isFalse();
        assertThat(r.body().path("reason").asString()).isEqualTo("shutdown");
        assertExitedCleanly(caller);

        // withdrawn at the home: nobody waits there any more, and a value answered sent:false never arrives
        JsonNode sendSide = call(home, "GET", "/api/v1/channels/outlast-send", null).body();
        assertThat(sendSide.path("waitingSenders").asInt()).as("%s", sendSide).isZero();
        assertEmpty("outlast-send");
        JsonNode recvSide = call(home, "GET", "/api/v1/channels/outlast-recv", null).body();
        assertThat(recvSide.path("waitingReceivers").asInt()).as("%s", recvSide).isZero();
        Answer nobody = call(home, "POST", "/api/v1/channels/outlast-recv/send", Map.of("value", 1, "timeoutMs", 300));
        assertThat(nobody.body().path("sent").asBoolean()).as("the withdrawn receiver takes nothing: %s", nobody.body()).isFalse();
    }

    static void await(String what, Supplier<Boolean> condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        AssertionError last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (condition.get()) {
                    return;
                }
            } catch (AssertionError e) {
                last = e;
            }
            ServiceNode.sleep(200);
        }
        throw new AssertionError("not within 60 s: " + what, last);
    }
}
