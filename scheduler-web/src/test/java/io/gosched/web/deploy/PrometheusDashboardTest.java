package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.Workload;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Prometheus (Debian's {@code /usr/bin/prometheus}) scrapes the running service every second;
 * then every PromQL expression of the Grafana dashboard runs through Prometheus's HTTP API and must
 * return data. This is what a panel showing "No data" looks like from a test.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class PrometheusDashboardTest {

    static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
    /** Long enough that rate() over it always spans several 1 s scrapes. */
    static final String RATE_INTERVAL = "30s";

    @LocalServerPort
    int port;

    @Autowired
    WebTestClient client;

    @TempDir
    Path dir;

    private Process prometheus;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final JsonMapper json = JsonMapper.builder().build();

    @AfterEach
    void stopPrometheus() throws InterruptedException {
        if (prometheus != null) {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void everyDashboardQueryReturnsData() throws Exception {
        assumeTrue(Files.isExecutable(PROMETHEUS),
                "/usr/bin/prometheus missing: install Debian package 'prometheus' (CI does) to run this test");
        int promPort = freePort();
        startPrometheus(promPort);

        Workload.runJobAndChannelOps(client, "prometheus-test");
        String base = "http://127.0.0.1:" + promPort;
        awaitScrapes(base, 6);
        Workload.runJobAndChannelOps(client, "prometheus-test-2"); // counters move inside the rate window
        awaitScrapes(base, 10);

        List<String> failures = new ArrayList<>();
        List<Dashboard.Query> queries = Dashboard.load().queries();
        assertThat(queries).hasSizeGreaterThan(30);
        for (Dashboard.Query q : queries) {
            JsonNode r = query(base, q.promql(RATE_INTERVAL));
            if (!"success".equals(r.path("status").asString())) {
                failures.add(q.panel() + " [" + q.refId() + "] " + q.expr() + " -> error " + r.path("error").asString());
            } else if (r.path("data").path("result").isEmpty()) {
                failures.add(q.panel() + " [" + q.refId() + "] " + q.expr() + " -> no data");
            }
        }
        assertThat(failures).as("dashboard queries without data").isEmpty();
    }

    private void startPrometheus(int promPort) throws IOException {
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                scrape_configs:
                  - job_name: gosched
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(port));
        prometheus = new ProcessBuilder(PROMETHEUS.toString(),
                "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + promPort,
                "--log.level=warn")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile())
                .start();
    }

    /** Waits until Prometheus holds {@code n} successful scrapes of the app. */
    private void awaitScrapes(String base, int n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(prometheus.isAlive()).as("prometheus exited: %s", log()).isTrue();
            try {
                JsonNode r = query(base, "sum_over_time(up{job=\"gosched\"}[5m])");
                JsonNode result = r.path("data").path("result");
                if (!result.isEmpty() && Double.parseDouble(result.get(0).get("value").get(1).asString()) >= n) {
                    return;
                }
            } catch (IOException notUpYet) {
                // Prometheus still starting
            }
            Thread.sleep(500);
        }
        throw new AssertionError("Prometheus did not scrape the app " + n + " times in 60 s; log:\n" + log());
    }

    private JsonNode query(String base, String promql) throws IOException, InterruptedException {
        URI uri = URI.create(base + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() == 503) {
            // Prometheus answers plain-text "Service Unavailable" until its TSDB is open.
            throw new IOException("prometheus not ready: " + resp.body().strip());
        }
        return json.readTree(resp.body());
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("prometheus.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
