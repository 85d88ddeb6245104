package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The dead letter end to end (issue 12, item 4): a job whose nodes die under it until its ticket
 * has been delivered {@code gosched.cluster.max-deliver} times ends {@code failed} with reason
 * {@code lost}, counted in {@code gosched_jobs_lost_total}, and {@code POST /jobs/{id}/retry}
 * publishes it again and it then succeeds. Real nats-server, the dying nodes forked into JVMs of
 * their own and ended by SIGKILL.
 */
class ClusterLostJobsTest extends OnOneNatsServer {

    /** Every node of one cluster agrees on max-deliver (the last to start writes it into the consumers). */
    static final String MAX_DELIVER = "--gosched.cluster.max-deliver=2";

    @Test
    void aJobWhoseNodesDieMaxDeliverTimesFailsAsLostAndRunsAgainOnRetry() throws Exception {
        // two nodes that will die, started together (each start is a JVM of its own)
        CompletableFuture<ClusterNode> one = CompletableFuture.supplyAsync(() -> start("doomed-1"));
        CompletableFuture<ClusterNode> two = CompletableFuture.supplyAsync(() -> start("doomed-2"));
        ClusterNode d1 = one.get(300, TimeUnit.SECONDS);
        ClusterNode d2 = two.get(300, TimeUnit.SECONDS);

        String id = d1.submit(ClusterNode.sleepJob(12_000));
        String firstRunner = d1.await(id, "running", Duration.ofSeconds(30)).path("node").asText();
        ClusterNode first = firstRunner.equals(d1.id) ? d1 : d2;
        ClusterNode second = first == d1 ? d2 : d1;
        first.kill();

        // delivery 2: the other node takes it over after the ack wait
        JsonNode takenOver = awaitAttempt(second, id, 2, Duration.ofSeconds(40));
        assertThat(takenOver.path("state").asText()).isEqualTo("running");
        assertThat(takenOver.path("node").asText()).isEqualTo(second.id);
        assertThat(second.scrape()).containsPattern("(?m)^gosched_jobs_redelivered_total\\{[^}]*} 1\\.0");
        second.kill();

        // delivery 3 would be beyond max-deliver: the node that comes next finds a dead letter
        ClusterNode survivor = ClusterNode.inJvm(nats.url(), "survivor", MAX_DELIVER);
        nodes.add(survivor);
        JsonNode lost = survivor.await(id, "failed", Duration.ofSeconds(60));
        assertThat(lost.path("error").path("reason").asText()).as("%s", lost).isEqualTo("lost");
        assertThat(lost.path("error").path("detail").asText()).contains("delivered 2 times");
        assertThat(lost.path("attempt").asInt()).as("no third attempt ran").isEqualTo(2);
        String metrics = survivor.scrape();
        assertThat(metrics).as("the dead letter is counted where it was handled")
                .containsPattern("(?m)^gosched_jobs_lost_total\\{[^}]*node=\"survivor\"[^}]*} 1\\.0")
                .doesNotContainPattern("(?m)^gosched_jobs_redelivered_total\\{[^}]*} [1-9]");

        // the dead letter is final until a user asks again: a retry publishes a fresh ticket with a fresh budget
        JsonNode again = survivor.client.post().uri("/api/v1/jobs/{id}/retry", id).exchange().expectStatus().isAccepted()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(again.path("state").asText()).isIn("queued", "running");
        JsonNode done = survivor.await(id, "succeeded", Duration.ofSeconds(60));
        assertThat(done.path("node").asText()).isEqualTo("survivor");
        assertThat(done.path("attempt").asInt()).isEqualTo(3);
        assertThat(done.path("error").isMissingNode() || done.path("error").isNull()).as("%s", done).isTrue();
        assertThat(survivor.scrape()).as("a retried lost job is not lost again")
                .containsPattern("(?m)^gosched_jobs_lost_total\\{[^}]*} 1\\.0");
    }

    private ClusterNode start(String id) {
        try {
            return forked(id, MAX_DELIVER);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode awaitAttempt(ClusterNode on, String id, int attempt, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        JsonNode j = on.job(id);
        while (j.path("attempt").asInt() < attempt || !j.path("state").asText().equals("running")) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("job " + id + " not running attempt " + attempt + " within " + within + ": " + j);
            }
            Thread.sleep(100);
            j = on.job(id);
        }
        return j;
    }
}
