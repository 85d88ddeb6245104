package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * A read of a running job answers its live counters on every node, not only on the one that runs
 * it: the runner's progress reaches the others through the store (issue 12, item 5).
 */
class ClusterJobProgressTest extends OnOneNatsServer {

    @Test
    void aGetOnTheNodeThatDoesNotRunTheJobShowsItsLiveCounters() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        // 6 goroutines spawned, 6 live for a minute: nothing of it is in the record until the attempt ends
        String id = a.submit(Map.of("workload", Map.of("steps", List.of(
                Map.of("op", "spawn", "count", 6, "steps", List.of(Map.of("op", "sleep", "ms", 60_000))),
                Map.of("op", "sleep", "ms", 60_000))), "timeoutMs", 120_000));
        String runner = a.await(id, "running", Duration.ofSeconds(20)).path("node").asText();
        ClusterNode here = runner.equals("node-a") ? a : b;
        ClusterNode other = here == a ? b : a;

        JsonNode local = awaitCounters(here, id, Duration.ofSeconds(10));
        assertThat(local.path("counters").path("goroutinesSpawned").asLong()).as("the runner reads its run").isEqualTo(6);

        JsonNode remote = awaitCounters(other, id, Duration.ofSeconds(10));
        assertThat(remote.path("state").asText()).isEqualTo("running");
        assertThat(remote.path("node").asText()).isEqualTo(runner);
        assertThat(remote.path("counters").path("goroutinesSpawned").asLong()).as("GET on %s, which does not run it", other.id)
                .isEqualTo(6);
        assertThat(remote.path("counters").path("liveGoroutines").asLong()).as("the main goroutine and the six it spawned")
                .isEqualTo(local.path("counters").path("liveGoroutines").asLong()).isGreaterThanOrEqualTo(6);
        assertThat(other.client.get().uri("/api/v1/jobs?state=running").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody().path("items").get(0).path("counters").path("goroutinesSpawned").asLong())
                .as("the list too").isEqualTo(6);

        // once it ends, the record's counters are the whole truth again: cancelled from the other node
        other.client.delete().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isAccepted();
        JsonNode done = other.await(id, "cancelled", Duration.ofSeconds(20));
        assertThat(done.path("counters").path("goroutinesSpawned").asLong()).isEqualTo(6);
        assertThat(done.path("counters").path("liveGoroutines").asLong()).as("nothing runs any more").isZero();
        assertThat(here.job(id)).as("both nodes read the same final record").isEqualTo(done);
    }

    /** Polls {@code node} until the job shows spawned goroutines, or returns what it showed last. */
    private static JsonNode awaitCounters(ClusterNode node, String id, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        JsonNode j;
        while ((j = node.job(id)).path("counters").path("goroutinesSpawned").asLong() < 6 && System.nanoTime() - end < 0) {
            Thread.sleep(50);
        }
        return j;
    }
}
