package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/**
 * Jobs that wait for jobs ({@code after}) across two gosched nodes on one real nats-server: the
 * waiting job learns of its dependency's end through the store's watch on whichever node, runs
 * once after it succeeded, and a chain is cancelled link by link when its head fails.
 */
class ClusterDependenciesTest extends OnOneNatsServer {

    static Map<String, Object> failingJob(long sleepMs) {
        return Map.of("workload", Map.of("channels", List.of(Map.of("name", "c", "capacity", 1)),
                "steps", List.of(Map.of("op", "sleep", "ms", sleepMs), Map.of("op", "close", "channel", "c"),
                        Map.of("op", "close", "channel", "c"))));
    }

    static Map<String, Object> after(Map<String, Object> body, String... ids) {
        java.util.HashMap<String, Object> b = new java.util.HashMap<>(body);
        b.put("after", List.of(ids));
        return b;
    }

    @Test
    void aJobWaitingOnAJobSubmittedElsewhereRunsOnceAfterItSucceeded() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        String first = a.submit(ClusterNode.sleepJob(1_500));
        String second = b.submit(after(ClusterNode.sleepJob(10), first));
        assertThat(a.job(second).path("state").asText()).as("every node reads it waiting").isEqualTo("waiting");
        assertThat(b.job(second).path("after").get(0).path("id").asText()).isEqualTo(first);
        JsonNode done = a.await(second, "succeeded", Duration.ofSeconds(30));
        JsonNode head = b.job(first);
        assertThat(head.path("state").asText()).isEqualTo("succeeded");
        assertThat(done.path("attempt").asInt()).as("ran once").isEqualTo(1);
        assertThat(done.path("attempts")).hasSize(1);
        assertThat(Instant.parse(done.path("startedAt").asText())).as("after its dependency ended")
                .isAfterOrEqualTo(Instant.parse(head.path("finishedAt").asText()));
        assertThat(done.path("after").get(0).path("state").asText()).isEqualTo("succeeded");
        Thread.sleep(2 * 2_000); // two dependency sweeps on each node: none may queue it again
        assertThat(b.job(second).path("attempt").asInt()).isEqualTo(1);
    }

    @Test
    void aChainIsCancelledLinkByLinkWhenItsHeadFails() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        String head = a.submit(failingJob(1_000));
        String mid = b.submit(after(ClusterNode.sleepJob(10), head));
        String tail = a.submit(after(ClusterNode.sleepJob(10), mid));
        assertThat(b.job(tail).path("state").asText()).isEqualTo("waiting");
        b.await(head, "failed", Duration.ofSeconds(30));
        JsonNode m = b.await(mid, "cancelled", Duration.ofSeconds(30));
        assertThat(m.path("error").path("reason").asText()).isEqualTo("dependency");
        assertThat(m.path("error").path("detail").asText()).contains(head).contains("failed");
        JsonNode t = a.await(tail, "cancelled", Duration.ofSeconds(30));
        assertThat(t.path("error").path("detail").asText()).contains(mid).contains("cancelled");
        assertThat(t.path("attempt").asInt()).as("never ran").isZero();
    }

    @Test
    void aBatchOnOneNodeRunsInItsOrderAcrossBoth() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        JsonNode r = b.client.post().uri("/api/v1/jobs/batch").contentType(MediaType.APPLICATION_JSON).bodyValue(Map.of("jobs", List.of(
                Map.of("key", "x", "workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 500)))),
                Map.of("key", "y", "after", List.of("x"), "workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 10)))),
                Map.of("after", List.of("x", "y"), "workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 10)))))))
                .exchange().expectStatus().isAccepted().expectBody(JsonNode.class).returnResult().getResponseBody();
        String x = r.path("ids").get(0).asText();
        String y = r.path("ids").get(1).asText();
        String z = r.path("ids").get(2).asText();
        JsonNode vz = a.await(z, "succeeded", Duration.ofSeconds(30));
        JsonNode vy = a.job(y);
        assertThat(Instant.parse(vy.path("startedAt").asText())).isAfterOrEqualTo(Instant.parse(a.job(x).path("finishedAt").asText()));
        assertThat(Instant.parse(vz.path("startedAt").asText())).isAfterOrEqualTo(Instant.parse(vy.path("finishedAt").asText()));
        assertThat(vz.path("attempt").asInt()).isEqualTo(1);
    }
}
