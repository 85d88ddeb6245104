package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.testing.RequiresDocker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * docker-compose.yml as a user without a registry brings it up ({@code app} and {@code prometheus}
 * by name; Grafana comes from a registry): the service healthy, a job run through its published
 * port, Prometheus scraping it with deploy/prometheus/prometheus.yml, and the "load" profile's load
 * generator run briefly against it.
 */
@RequiresDocker
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ComposeStackTest {

    @RegisterExtension
    static final ComposeStack STACK = ComposeStack.single()
            .with("LOAD_WARMUP_SECONDS", "3")
            .with("LOAD_RAMP", "2 4")
            .with("LOAD_STAGE_SECONDS", "3")
            .with("LOAD_STEADY_SECONDS", "5")
            .with("LOAD_MAX_P99_MS", "3000");

    @TempDir
    static Path results;

    @Test
    @Order(1)
    void aJobRunsThroughThePublishedPort() throws Exception {
        StackNode app = new StackNode("app", STACK.url("GOSCHED_PORT"));
        String id = app.submit(StackNode.YIELD_JOB);
        JsonNode job = app.awaitFinal(id, Duration.ofSeconds(60));
        assertThat(job.path("state").asString()).as("job %s: %s", id, job).isEqualTo("succeeded");
    }

    @Test
    @Order(2)
    void prometheusScrapesTheAppWithTheComposeConfig() throws Exception {
        StackNode prometheus = new StackNode("prometheus", STACK.url("PROMETHEUS_PORT"));
        ComposeClusterStackTest.awaitScrapes(prometheus, 2);
        JsonNode targets = prometheus.get("/api/v1/targets").path("data").path("activeTargets");
        assertThat(targets).as("Prometheus's targets: %s", targets).hasSize(1);
        assertThat(targets.get(0).path("labels").path("instance").asString()).isEqualTo("app:8080");
        assertThat(targets.get(0).path("health").asString()).as("%s", targets).isEqualTo("up");
        assertThat(prometheus.value("gosched_sched_gomaxprocs_threads{service=\"gosched\"}")).as("a gosched gauge").isPositive();
    }

    @Test
    @Order(3)
    void theLoadProfileRunsAgainstTheApp() throws Exception {
        STACK.with("LOAD_RESULTS_DIR", results.toString());
        ComposeStack.Result run = STACK.run("loadtest", Duration.ofMinutes(3));
        System.out.println(run.output().lines().filter(l -> l.startsWith("RESULT")).reduce("== load test (single stack)", (a, b) -> a + "\n" + b));
        assertThat(run.exit()).as("the load test's exit code; its output:\n%s", run.output()).isZero();
        JsonNode result = StackNode.JSON.readTree(Files.readString(results.resolve("load-result.json")));
        LoadResult.assertRanClean(result, run.output());
        assertThat(result.path("targets").asString()).isEqualTo("http://app:8080");
    }
}
