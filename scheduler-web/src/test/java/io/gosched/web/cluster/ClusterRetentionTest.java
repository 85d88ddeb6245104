package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.ClusterLayout;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.api.KeyValueEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Retention across nodes ({@code gosched.api.retention.*}): finished jobs beyond
 * {@code max-finished-jobs}, and those older than {@code max-age}, are removed from the shared
 * store, with their Idempotency-Keys, by the one node that holds the leader key; when the leader
 * dies (SIGKILL) another node takes the duty over. Real nats-server; the leader is forked so that
 * it can die for real.
 */
class ClusterRetentionTest extends OnOneNatsServer {

    static final String[] RETENTION = {"--gosched.api.retention.max-finished-jobs=3", "--gosched.api.retention.max-age=15s"};
    static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void theLeaderRemovesFinishedJobsForEveryNodeAndAnotherTakesOverWhenItDies() throws Exception {
        ClusterNode first = ClusterNode.forked(dir, nats.url(), "first", RETENTION);
        nodes.add(first);
        awaitLeader("first");
        ClusterNode second = ClusterNode.inJvm(nats.url(), "second", RETENTION);
        nodes.add(second);
        assertThat(leader()).as("the first node keeps the lead").isEqualTo("first");

        // five jobs finish one after the other, submitted on the node that does not lead; one more waits
        List<String> done = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = i == 0 ? submitWithKey(second, "kept-key", ClusterNode.sleepJob(5)) : second.submit(ClusterNode.sleepJob(5));
            second.await(id, "succeeded", Duration.ofSeconds(30));
            done.add(id);
        }
        String waiting = second.submit(Map.of("workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 1))),
                "notBefore", Instant.now().plusSeconds(300).toString()));

        // by count: the two oldest go first, on every node
        awaitGone(second, done.get(0), Duration.ofSeconds(20));
        awaitGone(second, done.get(1), Duration.ofSeconds(10));
        for (String kept : done.subList(2, 5)) {
            assertThat(status(first, kept)).as("the three most recent stay within max-age").isEqualTo(200);
        }
        assertThat(status(first, done.get(0))).as("removed from the shared store, so on every node").isEqualTo(404);
        // its Idempotency-Key went with it: the key is free for another body, no 409, no replay
        JsonNode reused = second.client.post().uri("/api/v1/jobs").header("Idempotency-Key", "kept-key")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(ClusterNode.sleepJob(6)).exchange().expectStatus().isAccepted()
                .expectHeader().doesNotExist("Idempotent-Replayed").expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(reused.path("id").asText()).isNotEqualTo(done.get(0));
        second.await(reused.path("id").asText(), "succeeded", Duration.ofSeconds(30));

        // by age: the rest go after max-age; a job that has not finished is never removed
        for (String old : done.subList(2, 5)) {
            awaitGone(first, old, Duration.ofSeconds(40));
        }
        assertThat(second.job(waiting).path("state").asText()).isEqualTo("queued");
        assertThat(first.scrape()).as("the leader removed them")
                .containsPattern("(?m)^gosched_jobs_evicted_total\\{[^}]*reason=\"retention\"[^}]*} [5-9]\\.0");
        assertThat(second.scrape()).as("the other node left retention to the leader")
                .doesNotContainPattern("(?m)^gosched_jobs_evicted_total\\{[^}]*reason=\"retention\"[^}]*} [1-9]");

        // the leader dies: its key expires after three heartbeats, the survivor takes the lead and the duty
        first.kill();
        awaitLeader("second");
        List<String> later = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            String id = second.submit(ClusterNode.sleepJob(5));
            second.await(id, "succeeded", Duration.ofSeconds(30));
            later.add(id);
        }
        awaitGone(second, reused.path("id").asText(), Duration.ofSeconds(40));
        for (String id : later) {
            awaitGone(second, id, Duration.ofSeconds(40));
        }
        assertThat(second.job(waiting).path("state").asText()).isEqualTo("queued");
        assertThat(second.scrape()).as("the new leader removed them")
                .containsPattern("(?m)^gosched_jobs_evicted_total\\{[^}]*reason=\"retention\"[^}]*} [3-9]\\.0");
    }

    private static String submitWithKey(ClusterNode on, String key, Map<String, Object> body) {
        return on.client.post().uri("/api/v1/jobs").header("Idempotency-Key", key).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isAccepted().expectBody(JsonNode.class).returnResult().getResponseBody().path("id").asText();
    }

    private static int status(ClusterNode on, String id) {
        return on.client.get().uri("/api/v1/jobs/{id}", id).exchange().returnResult(String.class).getStatus().value();
    }

    private static void awaitGone(ClusterNode on, String id, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        while (status(on, id) != 404) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("job " + id + " still there after " + within + " on " + on.id + ": " + on.job(id));
            }
            Thread.sleep(200);
        }
    }

    /** The node holding the leader key in {@code gosched_nodes}, or null. */
    private String leader() throws Exception {
        try (Connection c = Nats.connect(nats.url())) {
            KeyValueEntry e = c.keyValue(ClusterLayout.NODES_BUCKET).get(ClusterLayout.LEADER_KEY);
            return e == null || e.getValue() == null ? null : JSON.readTree(e.getValue()).path("node").asText();
        }
    }

    private void awaitLeader(String node) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String now;
        while (!node.equals(now = leader())) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("leader is " + now + ", not " + node + ", after 30 s");
            }
            Thread.sleep(200);
        }
    }
}
