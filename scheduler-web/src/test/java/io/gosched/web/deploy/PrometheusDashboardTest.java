package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import io.gosched.testing.Await;
import io.gosched.web.MeterTraffic;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * A real Prometheus (Debian's {@code /usr/bin/prometheus}) scrapes the running service every second;
 * then every PromQL expression of the Grafana dashboard runs through Prometheus's HTTP API and must
 * return data. This is what a panel showing "No data" looks like from a test. The service may call
 * one HTTP target, a real server on loopback, so that the HTTP-target panels have calls to show.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class PrometheusDashboardTest {

    /** Long enough that rate() over it always spans several 1 s scrapes. */
    static final String RATE_INTERVAL = "30s";

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient client;

    @TempDir
    Path dir;

    private LocalPrometheus prometheus;

    /** The HTTP target: /hooks/flaky answers 502 to every other call, 200 to the rest. */
    static HttpServer target;
    static final AtomicInteger calls = new AtomicInteger();

    @DynamicPropertySource
    static void allowTheTarget(DynamicPropertyRegistry registry) throws IOException {
        target = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        target.createContext("/hooks/flaky", x -> {
            try (x) {
                x.getRequestBody().readAllBytes();
                x.sendResponseHeaders(calls.incrementAndGet() % 2 == 1 ? 502 : 200, -1);
            }
        });
        target.start();
        registry.add("gosched.jobs.http.allowed-targets[0]", PrometheusDashboardTest::prefix);
    }

    static String prefix() {
        return "http://127.0.0.1:" + target.getAddress().getPort() + "/hooks/";
    }

    @AfterAll
    static void stopTarget() {
        if (target != null) {
            target.stop(0);
        }
    }

    /** An HTTP-target job whose first attempt gets a 502 and is retried: calls of two status classes, a retry, a success. */
    private void runRetriedHttpJob() {
        Map<?, ?> job = client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("http", Map.of("url", prefix() + "flaky"), "retry", Map.of("maxAttempts", 3, "backoffMs", 10)))
                .exchange().expectStatus().isAccepted().expectBody(Map.class).returnResult().getResponseBody();
        String id = String.valueOf(job.get("id"));
        Await.untilPasses("HTTP job " + id + " succeeded", Duration.ofSeconds(60), () -> assertThat(client.get().uri("/api/v1/jobs/{id}", id)
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody().get("state")).isEqualTo("succeeded"));
    }

    @AfterEach
    void stopPrometheus() throws InterruptedException {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @Test
    void everyDashboardQueryReturnsData() throws Exception {
        assumeTrue(Files.isExecutable(LocalPrometheus.BINARY), LocalPrometheus.MISSING);
        prometheus = LocalPrometheus.start(dir, """
                  - job_name: gosched
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(port));

        MeterTraffic.runJobAndChannelOps(client, "prometheus-test");
        runRetriedHttpJob();
        awaitScrapes(6);
        MeterTraffic.runJobAndChannelOps(client, "prometheus-test-2"); // counters move inside the rate window
        runRetriedHttpJob();
        awaitScrapes(10);

        List<String> failures = new ArrayList<>();
        List<Dashboard.Query> queries = Dashboard.load().queries();
        assertThat(queries).hasSizeGreaterThan(30);
        for (Dashboard.Query q : queries) {
            if (q.clusterOnly()) {
                continue; // no such meters in the embedded application: ClusterDashboardTest runs these against two nodes
            }
            JsonNode r = prometheus.query(q.promql(RATE_INTERVAL));
            if (!"success".equals(r.path("status").asString())) {
                failures.add(q.panel() + " [" + q.refId() + "] " + q.expr() + " -> error " + r.path("error").asString());
            } else if (r.path("data").path("result").isEmpty()) {
                failures.add(q.panel() + " [" + q.refId() + "] " + q.expr() + " -> no data");
            }
        }
        assertThat(failures).as("dashboard queries without data").isEmpty();

        // The "Jobs by type" row keeps each type's series apart, and the HTTP target's by its prefix and status class.
        List<Dashboard.Query> byType = DashboardTest.rowQueries(Dashboard.load(), "Jobs by type");
        assertThat(labels(byType, "Submitted /s by type", "type")).contains("template:fan-out-fan-in", "http");
        assertThat(labels(byType, "Succeeded /s by type", "type")).contains("template:fan-out-fan-in", "http");
        assertThat(labels(byType, "Retried /s by type", "type")).contains("http");
        assertThat(labels(byType, "Attempt duration p50 / p99 by type", "type")).contains("template:fan-out-fan-in", "http");
        assertThat(labels(byType, "HTTP target calls /s by status class", "outcome")).contains("2xx", "5xx");
        assertThat(labels(byType, "HTTP target calls /s by status class", "target")).containsExactly(prefix());
        assertThat(labels(byType, "HTTP target latency p50 / p99 by target", "target")).containsExactly(prefix());
        assertThat(prometheus.value("sum(increase(gosched_jobs_by_type_retried_total{type=\"http\"}[5m]))"))
                .as("the 502s were retried (increase extrapolates: at least the two seen)").isGreaterThanOrEqualTo(1.0);
    }

    /** The values of {@code label} over the series the panel's queries return. */
    private Set<String> labels(List<Dashboard.Query> queries, String panel, String label) throws Exception {
        Set<String> out = new TreeSet<>();
        List<Dashboard.Query> of = queries.stream().filter(q -> q.panel().equals(panel)).toList();
        assertThat(of).as("panel '%s'", panel).isNotEmpty();
        for (Dashboard.Query q : of) {
            prometheus.query(q.promql(RATE_INTERVAL)).path("data").path("result")
                    .forEach(r -> out.add(r.path("metric").path(label).asString()));
        }
        return out;
    }

    /** Waits until Prometheus holds {@code n} successful scrapes of the app. */
    private void awaitScrapes(int n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(prometheus.alive()).as("prometheus exited: %s", prometheus.log()).isTrue();
            if (prometheus.value("sum_over_time(up{job=\"gosched\"}[5m])") >= n) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("Prometheus did not scrape the app " + n + " times in 60 s; log:\n" + prometheus.log());
    }
}
