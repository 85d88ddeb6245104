package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * HTTP-target jobs in cluster mode, two nodes on one real nats-server and a real local HTTP
 * server as the target: a job submitted on one node runs on whichever takes it, a 503 is retried
 * under the job's policy with the same Idempotency-Key, and every node reads the target's answer
 * as the job's result.
 */
class ClusterHttpJobsTest extends OnOneNatsServer {

    private HttpServer target;
    /** Idempotency-Key and Gosched-Attempt of every call, in arrival order. */
    private final ConcurrentLinkedQueue<String[]> calls = new ConcurrentLinkedQueue<>();
    private final Map<String, Integer> seenPerKey = new ConcurrentHashMap<>();

    @BeforeEach
    void startTarget() throws Exception {
        target = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        target.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        target.createContext("/hooks/", x -> {
            try (x) {
                byte[] in = x.getRequestBody().readAllBytes();
                String key = x.getRequestHeaders().getFirst("Idempotency-Key");
                String attempt = x.getRequestHeaders().getFirst("Gosched-Attempt");
                calls.add(new String[] {key, attempt});
                // the first call of every job fails as an overloaded target would: the retry policy takes it again
                boolean first = seenPerKey.merge(key, 1, Integer::sum) == 1;
                byte[] out = first ? new byte[0] : ("{\"echo\":" + new String(in, StandardCharsets.UTF_8) + "}").getBytes();
                x.getResponseHeaders().set("Content-Type", "application/json");
                x.sendResponseHeaders(first ? 503 : 200, out.length == 0 ? -1 : out.length);
                if (out.length > 0) {
                    try (OutputStream o = x.getResponseBody()) {
                        o.write(out);
                    }
                }
            }
        });
        target.start();
    }

    @AfterEach
    void stopTarget() {
        target.stop(0);
    }

    private String prefix() {
        return "http://127.0.0.1:" + target.getAddress().getPort() + "/hooks/";
    }

    @Test
    void httpJobsSubmittedOnOneNodeRunOnAnyAreRetriedAndReadTheSameEverywhere() throws Exception {
        String allow = "--gosched.jobs.http.allowed-targets=" + prefix();
        ClusterNode a = node("node-a", allow);
        ClusterNode b = node("node-b", allow);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(a.submit(Map.of("http", Map.of("url", prefix() + "job", "body", Map.of("i", i)),
                    "retry", Map.of("maxAttempts", 3, "backoffMs", 50), "timeoutMs", 30_000)));
        }
        for (int i = 0; i < ids.size(); i++) {
            JsonNode done = b.await(ids.get(i), "succeeded", Duration.ofSeconds(60));
            assertThat(done.path("attempt").asInt()).as("the 503, then the answer").isEqualTo(2);
            assertThat(done.path("result").path("status").asInt()).isEqualTo(200);
            assertThat(done.path("result").path("body").path("echo").path("i").asInt()).isEqualTo(i);
            assertThat(a.job(ids.get(i)).path("result")).as("the same on the node it was submitted to").isEqualTo(done.path("result"));
        }
        for (String id : ids) {
            assertThat(calls).filteredOn(c -> c[0].equals(id)).extracting(c -> c[1]).as("calls of %s", id).containsExactly("1", "2");
        }
        assertThat(calls.stream().map(c -> c[0]).distinct()).containsExactlyInAnyOrderElementsOf(ids);
    }

    @Test
    void aTargetOutsideTheListIsRefusedOnEveryNode() {
        ClusterNode a = node("node-a", "--gosched.jobs.http.allowed-targets=" + prefix());
        JsonNode problem = a.client.post().uri("/api/v1/jobs").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("http", Map.of("url", "http://127.0.0.1:" + target.getAddress().getPort() + "/admin")))
                .exchange().expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(problem.toString()).contains("/http/url").contains("gosched.jobs.http.allowed-targets");
        assertThat(calls).isEmpty();
    }
}
