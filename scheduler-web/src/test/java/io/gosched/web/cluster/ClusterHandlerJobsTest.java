package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.gosched.runtime.Go;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.testing.OneHandler;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.testing.Await;
import io.gosched.service.workload.Task;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * Handler jobs in cluster mode, on a real nats-server: a job of an application's handler runs
 * on a node that has the handler, wherever it was submitted; a node without it passes it on; a
 * job whose handler no running node has stays queued, says so ({@code waitingFor}), and runs once
 * a node with the handler joins.
 */
class ClusterHandlerJobsTest extends OnOneNatsServer {

    /** Held by a run of "h" given {@code args.gate}, by gate, until the test counts it down. */
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

    private CountDownLatch latch(String gate) {
        return gates.computeIfAbsent(gate, k -> new CountDownLatch(1));
    }

    /** What every run of handler "h" saw: job id, attempt, the node it ran on. */
    private final ConcurrentLinkedQueue<String[]> runs = new ConcurrentLinkedQueue<>();

    /**
     * A node's handlers: "h" doubles {@code args.n} (a non-negative integer, validated at parse
     * time as the starter's handlers are), answering which node ran it and the job id it saw.
     */
    private JobHandlers handlerH(String nodeId) {
        return new OneHandler("h", (args, pointer, in) -> {
            Long value = OneHandler.nonNegative(args, "n", pointer, in);
            if (value == null) {
                return null;
            }
            String gate = args.has("gate") ? args.get("gate").asText() : null;
            return call -> {
                runs.add(new String[] {call.jobId(), Integer.toString(call.attempt()), nodeId});
                if (gate != null) { // reports, waits (as a syscall: its P is handed off) until the test releases it, reports again
                    call.progress().accept(JobRecord.Report.of(0.5, "half of " + value, Instant.now()));
                    boolean released;
                    try {
                        released = Go.syscall(() -> latch(gate).await(60, TimeUnit.SECONDS));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    call.progress().accept(JobRecord.Report.of(Double.NaN, released ? "released" : "never released", Instant.now()));
                }
                return new Task.Outcome.Done(JsonNodeFactory.instance.objectNode().put("doubled", value * 2)
                        .put("ranOn", nodeId).put("jobId", call.jobId()));
            };
        });
    }

    private ClusterNode withH(String id, String... extra) {
        return node(id, Map.of("testJobHandlers", handlerH(id)), extra);
    }

    private static Map<String, Object> hJob(Object n) {
        return Map.of("handler", "h", "args", Map.of("n", n), "timeoutMs", 30_000);
    }

    @Test
    void handlerJobsSubmittedOnANodeWithoutTheHandlerRunOnTheNodeWithIt() throws Exception {
        ClusterNode with = withH("node-with");
        ClusterNode without = node("node-without");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(without.submit(hJob(i)));
        }
        for (int i = 0; i < ids.size(); i++) {
            JsonNode done = without.await(ids.get(i), "succeeded", Duration.ofSeconds(90));
            assertThat(done.path("node").asText()).isEqualTo("node-with");
            assertThat(done.path("attempt").asInt()).as("passing a job on is no attempt").isEqualTo(1);
            assertThat(done.has("waitingFor")).isFalse();
            String result = done.path("result").toString();
            assertThat(result).contains("\"doubled\":" + (i * 2)).contains("\"jobId\":\"" + ids.get(i) + "\"");
            assertThat(with.job(ids.get(i)).path("result")).isEqualTo(done.path("result"));
        }
        for (String id : ids) {
            assertThat(runs).filteredOn(r -> r[0].equals(id)).as("runs of %s", id).hasSize(1)
                    .allSatisfy(r -> assertThat(r).containsExactly(id, "1", "node-with"));
        }

        // the node with the handler validates the arguments at submission; the one without cannot, and the runner's refusal fails the job
        JsonNode problem = with.client.post().uri("/api/v1/jobs").contentType(org.springframework.http.MediaType.APPLICATION_JSON)
                .bodyValue(hJob(-1)).exchange().expectStatus().isEqualTo(422).expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(problem.toString()).contains("/args/n");
        String bad = without.submit(hJob(-1));
        JsonNode failed = without.await(bad, "failed", Duration.ofSeconds(60));
        assertThat(failed.path("error").path("detail").asText()).contains("handler 'h'").contains("node-with").contains("/args/n");
        assertThat(runs).noneMatch(r -> r[0].equals(bad));
    }

    @Test
    void aHandlersProgressReachesTheViewOnAnotherNodeWhileItRunsAndItsLastReportIsKeptInTheRecord() throws Exception {
        ClusterNode with = withH("node-with");
        ClusterNode without = node("node-without");
        String gate = "g-" + System.nanoTime();
        String id = without.submit(Map.of("handler", "h", "args", Map.of("n", 7, "gate", gate), "timeoutMs", 60_000));
        try {
            // Read where it does not run: the report comes with the runner's progress message, not from the record.
            JsonNode running = Await.value("the report on the other node", Duration.ofSeconds(60), () -> {
                JsonNode j = without.job(id);
                return j.path("progress").path("message").asText().equals("half of 7") ? j : null;
            });
            assertThat(running.path("state").asText()).isEqualTo("running");
            assertThat(running.path("node").asText()).isEqualTo("node-with");
            assertThat(running.path("progress").path("fraction").asDouble()).isEqualTo(0.5);
        } finally {
            latch(gate).countDown();
        }
        // The report made just before it returned: only the attempt's final write carries it to another node.
        JsonNode done = without.await(id, "succeeded", Duration.ofSeconds(60));
        assertThat(done.path("progress").path("message").asText()).as("%s", done).isEqualTo("released");
        assertThat(done.path("progress").has("fraction")).isFalse();
        assertThat(with.job(id).path("progress")).isEqualTo(done.path("progress"));
    }

    @Test
    void aJobWhoseHandlerNoNodeHasWaitsQueuedSayingSoAndRunsWhenANodeWithItJoins() throws Exception {
        // max-deliver 1: a node that handed the job back by nak would make it a dead letter at its second pass
        String[] strict = {"--gosched.cluster.max-deliver=1"};
        ClusterNode without = node("node-without", strict);
        String id = without.submit(hJob(21));
        long end = System.nanoTime() + Duration.ofSeconds(12).toNanos();
        while (System.nanoTime() - end < 0) { // at least two passes on by the node without it
            JsonNode j = without.job(id);
            assertThat(j.path("state").asText()).isEqualTo("queued");
            assertThat(j.path("waitingFor").asText()).isEqualTo("handler h");
            assertThat(j.path("attempt").asInt()).isZero();
            Thread.sleep(200);
        }
        assertThat(runs).isEmpty();

        ClusterNode with = withH("node-with", strict);
        JsonNode done = without.await(id, "succeeded", Duration.ofSeconds(60));
        assertThat(done.path("node").asText()).isEqualTo("node-with");
        assertThat(done.path("attempt").asInt()).isEqualTo(1);
        assertThat(done.has("waitingFor")).isFalse();
        assertThat(done.path("result").toString()).contains("\"doubled\":42");
        assertThat(runs).hasSize(1);
        assertThat(with.job(id).path("state").asText()).isEqualTo("succeeded");

        // with the handler present, a new job is not said to wait, even before it runs
        String next = without.submit(hJob(1));
        JsonNode j = without.job(next);
        assertThat(j.has("waitingFor")).as("%s", j).isFalse();
        without.await(next, "succeeded", Duration.ofSeconds(60));
    }
}
