package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.testing.RequiresDocker;
import io.gosched.web.MeterTraffic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * docker-compose.cluster.yml as a user brings it up (without Grafana, which no registry serves
 * here): NATS, three nodes of the project's image and Prometheus, healthy. Then, on that one stack,
 * in this order: jobs submitted through each node are read back from another; the load test of the
 * "load" profile ramps to saturation and holds with no 5xx and a Retry-After on every 429;
 * Prometheus has every node's target up and answers every dashboard query, the cluster row with a
 * series for each node; and a node killed with SIGKILL has its jobs finished by the other two.
 *
 * <p>The nodes get a 10 s ack-wait (a dead node's running jobs move after it, not after the default
 * 30 s) and a small cluster queue (max-queued-jobs 20), so the load test meets admission control
 * and its 429s are checked for Retry-After. CI keeps the load test short (a 10 s warm-up, 5 s ramp
 * phases, 15 s steady); a user's `--profile load` run takes its longer defaults.
 */
@RequiresDocker
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ComposeClusterStackTest {

    static final List<String> NODES = List.of("node-1", "node-2", "node-3");
    static final Map<String, String> PORTS = Map.of("node-1", "GOSCHED_NODE1_PORT", "node-2", "GOSCHED_NODE2_PORT",
            "node-3", "GOSCHED_NODE3_PORT");

    @RegisterExtension
    static final ComposeStack STACK = ComposeStack.cluster()
            .with("SPRING_APPLICATION_JSON", """
                    {"gosched":{"cluster":{"ack-wait":"10s"},"api":{"admission":{"max-queued-jobs":20}}}}""")
            .with("LOAD_WARMUP_SECONDS", "10")
            .with("LOAD_STAGE_SECONDS", "5")
            .with("LOAD_STEADY_SECONDS", "15")
            .with("LOAD_MAX_P99_MS", "3000");

    @TempDir
    static Path results;

    static StackNode node(String name) {
        return new StackNode(name, STACK.url(PORTS.get(name)));
    }

    static StackNode prometheus() {
        return new StackNode("prometheus", STACK.url("PROMETHEUS_PORT"));
    }

    @Test
    @Order(1)
    void aJobSubmittedThroughEachNodeIsReadBackFromAnother() throws Exception {
        for (int i = 0; i < NODES.size(); i++) {
            StackNode through = node(NODES.get(i));
            StackNode reader = node(NODES.get((i + 1) % NODES.size()));
            String id = through.submit(StackNode.YIELD_JOB);
            JsonNode job = reader.awaitFinal(id, Duration.ofSeconds(90));
            assertThat(job.path("id").asString()).isEqualTo(id);
            assertThat(job.path("state").asString()).as("job %s submitted through %s, read from %s: %s", id, through.name(),
                    reader.name(), job).isEqualTo("succeeded");
            assertThat(job.path("node").asString()).as("the node that ran it").isIn(NODES);
        }
    }

    @Test
    @Order(2)
    void theLoadProfileRampsToSaturationThenHoldsWithNo5xxAndRetryAfterOnEvery429() throws Exception {
        STACK.with("LOAD_RESULTS_DIR", results.toString());
        ComposeStack.Result run = STACK.run("loadtest", Duration.ofMinutes(4));
        System.out.println(run.output().lines().filter(l -> l.startsWith("==") || l.startsWith("RESULT"))
                .reduce("== load test (cluster stack)", (a, b) -> a + "\n" + b));
        assertThat(run.exit()).as("the load test's exit code; its output:\n%s", run.output()).isZero();

        Path file = results.resolve("load-result.json");
        assertThat(file).as("the result file the load test writes").exists();
        JsonNode result = StackNode.JSON.readTree(Files.readString(file));
        LoadResult.assertRanClean(result, run.output());
        assertThat(result.path("targets").asString()).as("spread over the three nodes")
                .isEqualTo("http://node-1:8080,http://node-2:8080,http://node-3:8080");
    }

    @Test
    @Order(3)
    void prometheusHasEveryNodeUpAndAnswersTheDashboardWithEveryNode() throws Exception {
        StackNode prometheus = prometheus();
        for (String n : NODES) {
            MeterTraffic.runJobAndChannelOps(node(n).client(), "compose-dash-" + n);
        }
        awaitScrapes(prometheus, 2); // every meter exists in Prometheus
        for (String n : NODES) {
            MeterTraffic.runJobAndChannelOps(node(n).client(), "compose-dash-again-" + n); // counters move inside the rate window
        }
        awaitScrapes(prometheus, 2);

        Map<String, String> health = new LinkedHashMap<>();
        for (JsonNode t : prometheus.get("/api/v1/targets").path("data").path("activeTargets")) {
            health.put(t.path("labels").path("instance").asString(), t.path("health").asString());
        }
        assertThat(health).as("Prometheus's targets").isEqualTo(Map.of("node-1:8080", "up", "node-2:8080", "up", "node-3:8080", "up"));

        Dashboard dashboard = Dashboard.load();
        List<Dashboard.Query> cluster = DashboardTest.clusterQueries(dashboard);
        List<String> failures = new ArrayList<>();
        for (Dashboard.Query q : dashboard.queries()) {
            if (q.httpTargetsOnly()) {
                continue; // no target is allowed on these nodes: PrometheusDashboardTest calls one and runs these
            }
            // Scrapes every 5 s here (the compose file's interval), so rates look back a minute.
            JsonNode r = prometheus.query(q.promql("1m"));
            String what = q.panel() + " [" + q.refId() + "] " + q.expr();
            if (!"success".equals(r.path("status").asString())) {
                failures.add(what + " -> error " + r.path("error").asString());
                continue;
            }
            JsonNode series = r.path("data").path("result");
            if (series.isEmpty()) {
                failures.add(what + " -> no data");
                continue;
            }
            if (cluster.contains(q)) {
                Set<String> seen = new TreeSet<>();
                series.forEach(s -> seen.add(s.path("metric").path("node").asString()));
                if (!seen.containsAll(NODES)) {
                    failures.add(what + " -> series for nodes " + seen + ", not for each of " + NODES);
                }
            }
        }
        assertThat(failures).as("dashboard queries without data, or without every node").isEmpty();
    }

    @Test
    @Order(4)
    void theJobsOfAKilledNodeFinishOnTheOthers() throws Exception {
        StackNode first = node("node-1");
        List<String> ids = new ArrayList<>();
        Set<String> runningOnDoomed = new HashSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        // Any node pulls any job: submit through all three until the doomed one runs at least two.
        while (runningOnDoomed.size() < 2) {
            assertThat(System.nanoTime()).as("two jobs running on node-2 within 90 s; submitted: %s", ids).isLessThan(deadline);
            for (String n : NODES) {
                ids.add(node(n).submit(StackNode.sleepJob(8_000)));
            }
            Thread.sleep(1_000);
            for (String id : ids) {
                JsonNode j = first.job(id);
                if (j.path("state").asString().equals("running") && j.path("node").asString().equals("node-2")) {
                    runningOnDoomed.add(id);
                }
            }
        }
        STACK.kill("node-2");

        StackNode survivor = node("node-3");
        for (String id : ids) {
            JsonNode j = survivor.awaitFinal(id, Duration.ofSeconds(120));
            assertThat(j.path("state").asString()).as("job %s: %s", id, j).isEqualTo("succeeded");
            if (runningOnDoomed.contains(id)) {
                assertThat(j.path("node").asString()).as("job %s ran on node-2 when it was killed: %s", id, j).isIn("node-1", "node-3");
                assertThat(j.path("attempt").asInt()).as("job %s: taken over as its next attempt: %s", id, j).isGreaterThanOrEqualTo(2);
            }
        }
    }

    /** Waits until Prometheus has scraped every node {@code more} times from now on. */
    static void awaitScrapes(StackNode prometheus, int more) throws Exception {
        String scrapes = "min(count_over_time(up{job=\"gosched\"}[1h]))";
        double start = prometheus.value(scrapes);
        double target = (Double.isNaN(start) ? 0 : start) + more;
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        double seen = start;
        while (System.nanoTime() < deadline) {
            seen = prometheus.value(scrapes);
            if (seen >= target) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("Prometheus scraped each node " + seen + " times, not " + target + ", in 120 s");
    }
}
