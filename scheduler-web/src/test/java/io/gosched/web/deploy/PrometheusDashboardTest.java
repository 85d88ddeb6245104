package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.MeterTraffic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * A real Prometheus (Debian's {@code /usr/bin/prometheus}) scrapes the running service every second;
 * then every PromQL expression of the Grafana dashboard runs through Prometheus's HTTP API and must
 * return data. This is what a panel showing "No data" looks like from a test.
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
        awaitScrapes(6);
        MeterTraffic.runJobAndChannelOps(client, "prometheus-test-2"); // counters move inside the rate window
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
