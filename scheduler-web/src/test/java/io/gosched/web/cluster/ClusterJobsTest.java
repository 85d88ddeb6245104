package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import tools.jackson.databind.JsonNode;

/**
 * Jobs across several gosched nodes sharing one real nats-server: what a user of a job service
 * relies on when there is more than one node (issue 12, item 10). Nodes run in this JVM, each in a
 * Spring context of its own, except where a node must die by SIGKILL: that one is forked.
 */
class ClusterJobsTest extends OnOneNatsServer {

    @Test
    void aFullNodeLeavesTheJobToAnother() throws Exception {
        ClusterNode a = node("node-a", "--gosched.api.admission.max-running-jobs=1");
        ClusterNode b = node("node-b", "--gosched.api.admission.max-running-jobs=1");
        String first = a.submit(ClusterNode.sleepJob(8_000));
        JsonNode running = a.await(first, "running", Duration.ofSeconds(20));
        ClusterNode full = running.path("node").asText().equals("node-a") ? a : b;
        ClusterNode other = full == a ? b : a;

        List<String> more = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            more.add(full.submit(ClusterNode.sleepJob(200)));
        }
        for (String second : more) {
            JsonNode done = full.await(second, "succeeded", Duration.ofSeconds(20));
            assertThat(done.path("node").asText()).as("submitted on the full node %s, run by the one with room", full.id)
                    .isEqualTo(other.id);
            assertThat(other.job(second)).as("every node reads the same record").isEqualTo(done);
        }
        assertThat(full.job(first).path("state").asText()).as("they ran while the first still ran").isEqualTo("running");
    }

    @Test
    void cancelFromTheNodeThatDoesNotRunTheJob() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        String id = a.submit(ClusterNode.sleepJob(60_000));
        String runner = a.await(id, "running", Duration.ofSeconds(20)).path("node").asText();
        ClusterNode other = runner.equals("node-a") ? b : a;

        // the events of the job, followed on the node that does not run it
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        other.client.get().uri("/api/v1/jobs/{id}/events", id).accept(MediaType.TEXT_EVENT_STREAM).exchange().expectStatus().isOk()
                .returnResult(JsonNode.class).getResponseBody().doOnNext(v -> events.add(v.path("state").asText()))
                .doFinally(s -> ended.countDown()).subscribe();

        Instant asked = Instant.now();
        other.client.delete().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isAccepted();
        JsonNode cancelled = other.await(id, "cancelled", Duration.ofSeconds(10));
        assertThat(Duration.between(asked, Instant.now())).as("the runner stopped it, not its 60 s of sleep").isLessThan(Duration.ofSeconds(10));
        assertThat(cancelled.path("node").asText()).isEqualTo(runner);
        assertThat(ended.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the event stream ends with the final state").isTrue();
        assertThat(events).contains("running").endsWith("cancelled");

        // a queued one is cancelled at once from any node
        String later = other.submit(Map.of("workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 1))),
                "notBefore", Instant.now().plusSeconds(30).toString()));
        JsonNode c = a.client.delete().uri("/api/v1/jobs/{id}", later).exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(c.path("state").asText()).isEqualTo("cancelled");
        assertThat(b.job(later).path("state").asText()).isEqualTo("cancelled");
    }

    @Test
    void anIdempotencyKeyRacedFromTwoNodesMakesOneJob() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        Map<String, Object> body = ClusterNode.sleepJob(10);
        int racers = 24;
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<EntityExchangeResult<JsonNode>>> answers = new ArrayList<>();
        for (int i = 0; i < racers; i++) {
            ClusterNode n = i % 2 == 0 ? a : b;
            answers.add(pool.submit(() -> {
                go.await();
                return n.client.post().uri("/api/v1/jobs").header("Idempotency-Key", "race-1").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(body).exchange().expectStatus().isAccepted().expectBody(JsonNode.class).returnResult();
            }));
        }
        go.countDown();
        Set<String> ids = new HashSet<>();
        int replays = 0;
        for (Future<EntityExchangeResult<JsonNode>> f : answers) {
            EntityExchangeResult<JsonNode> r = f.get();
            ids.add(r.getResponseBody().path("id").asText());
            if ("true".equals(r.getResponseHeaders().getFirst("Idempotent-Replayed"))) {
                replays++;
            }
        }
        pool.shutdown();
        assertThat(ids).as("one job for one key, whichever node answered").hasSize(1);
        assertThat(replays).isEqualTo(racers - 1);
        String id = ids.iterator().next();
        a.await(id, "succeeded", Duration.ofSeconds(20));
        JsonNode all = b.client.get().uri("/api/v1/jobs?size=500").exchange().expectStatus().isOk().expectBody(JsonNode.class)
                .returnResult().getResponseBody();
        assertThat(all.path("total").asInt()).isEqualTo(1);
        // another body under the key is a conflict on every node
        a.client.post().uri("/api/v1/jobs").header("Idempotency-Key", "race-1").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(ClusterNode.sleepJob(11)).exchange().expectStatus().isEqualTo(409);
    }

    @Test
    void retriesKeepTheirAttemptsAcrossNodesAndTheFailureSaysWhy() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        // closing a closed channel fails the step, on every attempt
        String id = a.submit(Map.of("workload", Map.of("channels", List.of(Map.of("name", "c", "capacity", 1)),
                "steps", List.of(Map.of("op", "close", "channel", "c"), Map.of("op", "close", "channel", "c"))),
                "retry", Map.of("maxAttempts", 3, "backoffMs", 50)));
        JsonNode failed = b.await(id, "failed", Duration.ofSeconds(30));
        assertThat(failed.path("attempt").asInt()).as("three attempts in all, wherever each ran").isEqualTo(3);
        assertThat(failed.path("error").path("reason").asText()).isEqualTo("step");
        assertThat(failed.path("error").path("pointer").asText()).isEqualTo("/workload/steps/1");
        assertThat(failed.path("counters").path("stepsRun").asLong()).as("the attempts' work added up").isGreaterThanOrEqualTo(3);

        JsonNode again = b.client.post().uri("/api/v1/jobs/{id}/retry", id).exchange().expectStatus().isAccepted()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(again.path("state").asText()).isIn("queued", "running", "failed");
        JsonNode refailed = a.await(id, "failed", Duration.ofSeconds(30));
        assertThat(refailed.path("attempt").asInt()).as("a manual retry brings a fresh budget of three").isEqualTo(6);
    }

    @Test
    void aFullRestartKeepsQueuedAndFinishedJobs() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        String finished = a.submit(ClusterNode.sleepJob(10));
        JsonNode before = a.await(finished, "succeeded", Duration.ofSeconds(20));
        String queued = b.submit(Map.of("workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", 10))), "notBefore",
                Instant.now().plusSeconds(25).toString()));
        String running = b.submit(ClusterNode.sleepJob(60_000));
        String runner = b.await(running, "running", Duration.ofSeconds(20)).path("node").asText();

        // every process goes: the nodes (gracefully, the runner last so that nobody takes its job over), then NATS by SIGKILL
        ClusterNode first = runner.equals("node-a") ? b : a;
        first.close();
        (first == a ? b : a).close();
        nodes.clear();
        nats.kill();
        nats.restart();
        ClusterNode a2 = node("node-a");
        ClusterNode b2 = node("node-b");

        assertThat(b2.job(finished)).as("a finished job is kept as it was").isEqualTo(before);
        assertThat(a2.job(queued).path("state").asText()).isEqualTo("queued");
        // Its record says running, attempt 1, until a node takes the handed-back ticket: wait for that.
        JsonNode moved = a2.job(running);
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (moved.path("attempt").asInt() < 2 && System.nanoTime() < end) {
            Thread.sleep(100);
            moved = a2.job(running);
        }
        assertThat(moved.path("state").asText()).isEqualTo("running");
        assertThat(moved.path("attempt").asInt()).as("a job running at shutdown was handed back and runs again").isEqualTo(2);
        JsonNode ran = a2.await(queued, "succeeded", Duration.ofSeconds(40));
        assertThat(ran.path("attempt").asInt()).isEqualTo(1);
        assertThat(Instant.parse(ran.path("startedAt").asText())).isAfterOrEqualTo(Instant.parse(ran.path("notBefore").asText()));
    }

    @Test
    void aNodeKilledMidJobLosesNothingAndRunsNothingTwice() throws Exception {
        ClusterNode doomed = ClusterNode.forked(dir, nats.url(), "node-doomed", "--gosched.api.admission.max-running-jobs=2");
        try {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                ids.add(doomed.submit(ClusterNode.sleepJob(4_000)));
            }
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            List<String> runningThere = new ArrayList<>();
            while (runningThere.size() < 2) {
                assertThat(System.nanoTime() - end).as("two jobs running on the doomed node").isNegative();
                runningThere.clear();
                for (String id : ids) {
                    JsonNode j = doomed.job(id);
                    if (j.path("state").asText().equals("running")) {
                        runningThere.add(id);
                    }
                }
                Thread.sleep(50);
            }
            doomed.kill();

            ClusterNode survivor = node("node-survivor");
            for (String id : ids) {
                JsonNode j = survivor.await(id, "succeeded", Duration.ofSeconds(60));
                assertThat(j.path("node").asText()).isEqualTo("node-survivor");
                assertThat(j.path("attempt").asInt()).as("job %s", id).isEqualTo(runningThere.contains(id) ? 2 : 1);
            }
            String metrics = survivor.scrape();
            assertThat(metrics).as("each job finished once, all of them here")
                    .containsPattern("(?m)^gosched_jobs_finished_total\\{[^}]*state=\"succeeded\"[^}]*} 6\\.0")
                    .containsPattern("(?m)^gosched_jobs_redelivered_total\\{[^}]*} 2\\.0");
        } finally {
            doomed.kill();
        }
    }

    @Test
    void natsRestartedUnderLoadAnswers503ThenRecoversLosingNothing() throws Exception {
        ClusterNode a = node("node-a");
        ClusterNode b = node("node-b");
        Set<String> accepted = ConcurrentHashMap.newKeySet();
        AtomicInteger unavailable = new AtomicInteger();
        List<String> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService load = Executors.newFixedThreadPool(4);
        for (int t = 0; t < 4; t++) {
            ClusterNode n = t % 2 == 0 ? a : b;
            load.submit(() -> {
                while (!stop.get()) {
                    EntityExchangeResult<JsonNode> r = n.client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                            .bodyValue(ClusterNode.sleepJob(20)).exchange().expectBody(JsonNode.class).returnResult();
                    int status = r.getStatus().value();
                    if (status == 202) {
                        accepted.add(r.getResponseBody().path("id").asText());
                    } else if (status == 503 && r.getResponseHeaders().getFirst("Retry-After") != null) {
                        unavailable.incrementAndGet();
                        Thread.sleep(50);
                    } else {
                        unexpected.add(status + " " + r.getResponseBody());
                    }
                }
                return null;
            });
        }
        long warm = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (accepted.size() < 5 && System.nanoTime() - warm < 0) {
            Thread.sleep(50); // the load is under way before NATS goes
        }
        assertThat(accepted).hasSizeGreaterThanOrEqualTo(5);
        nats.kill();
        Thread.sleep(3_000);
        // reads of what the node cannot reach are 503 too, never a hang or a 500
        a.client.get().uri("/api/v1/jobs/{id}", accepted.iterator().next()).exchange().expectStatus().isEqualTo(503)
                .expectHeader().exists("Retry-After");
        nats.restart();
        Thread.sleep(4_000);
        stop.set(true);
        load.shutdown();
        assertThat(load.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

        assertThat(unexpected).as("only 202 and 503 with Retry-After").isEmpty();
        assertThat(unavailable.get()).as("submissions during the outage got 503").isPositive();
        assertThat(accepted.size()).isGreaterThan(10);
        long end = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        Set<String> left = new HashSet<>(accepted);
        while (!left.isEmpty()) {
            if (System.nanoTime() - end >= 0) {
                // name each job left and what it says of itself (state, attempt, node): a stuck
                // claim and a lost ticket read differently
                List<String> views = left.stream().map(id -> b.job(id).toString()).toList();
                assertThat(views).as("every accepted job finishes; these did not").isEmpty();
            }
            left.removeIf(id -> b.job(id).path("state").asText().equals("succeeded"));
            Thread.sleep(100);
        }
    }
}
