package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/**
 * An intake node ({@code gosched.cluster.run-jobs=false}) takes submissions and leaves the shared
 * queue to the nodes that run jobs, as a job queue's insert-only client does: API nodes scale
 * apart from workers, and a backlog can be queued before any worker starts. It still runs the jobs
 * of its own channels, which can run nowhere else.
 */
class IntakeNodeTest extends OnOneNatsServer {

    private static final Map<String, Object> YIELD_JOB = Map.of("workload", Map.of("steps", List.of(Map.of("op", "yield"))),
            "timeoutMs", 60_000);

    @Test
    void anIntakeNodeQueuesJobsThatTheNodeThatRunsJobsRuns() throws Exception {
        ClusterNode intake = node("intake", "--gosched.cluster.run-jobs=false");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(intake.submit(YIELD_JOB));
        }
        // Longer than a pull's wait and a full scan of every consumer (1 s each): a node that
        // pulled the shared queue would have run these by now.
        Thread.sleep(2_500);
        for (String id : ids) {
            assertThat(intake.job(id).path("state").asString()).as("job %s on a cluster whose only node takes no jobs", id)
                    .isEqualTo("queued");
        }

        ClusterNode worker = node("worker");
        for (String id : ids) {
            JsonNode done = intake.await(id, "succeeded", Duration.ofSeconds(30));
            assertThat(done.path("node").asString()).as("the node that ran job %s", id).isEqualTo("worker");
        }
        assertThat(worker.submit(YIELD_JOB)).as("a node that runs jobs still takes submissions").isNotBlank();
    }

    @Test
    void anIntakeNodeRunsTheJobsOfItsOwnChannels() throws Exception {
        ClusterNode intake = node("intake", "--gosched.cluster.run-jobs=false");
        intake.client.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "at-intake", "capacity", 4)).exchange().expectStatus().isCreated();
        String id = intake.submit(Map.of("workload", Map.of("steps", List.of(Map.of("op", "send", "channel", "at-intake", "value", 7))),
                "timeoutMs", 60_000));

        JsonNode done = intake.await(id, "succeeded", Duration.ofSeconds(30));
        assertThat(done.path("node").asString()).as("a job of the intake node's channel runs at the channel's home").isEqualTo("intake");
        JsonNode ch = intake.client.get().uri("/api/v1/channels/at-intake").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(ch.path("len").asInt()).as("the value the job sent").isEqualTo(1);
    }
}
