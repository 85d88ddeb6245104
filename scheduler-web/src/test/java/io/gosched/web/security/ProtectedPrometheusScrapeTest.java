package io.gosched.web.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * With {@code gosched.api.security.prometheus-public=false}, a real Prometheus (Debian's binary)
 * scrapes {@code /actuator/prometheus} with the token in its scrape config, as
 * {@code deploy/prometheus/prometheus.yml} documents, while a scrape job without it is refused.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gosched.api.token=" + ProtectedPrometheusScrapeTest.TOKEN, "gosched.api.security.prometheus-public=false"})
class ProtectedPrometheusScrapeTest {

    static final String TOKEN = "scrape-token-0123456789";
    static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    private Process prometheus;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

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
    void prometheusScrapesWithTheTokenAndNotWithout() throws Exception {
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));

        assumeTrue(Files.isExecutable(PROMETHEUS),
                "/usr/bin/prometheus missing: install Debian package 'prometheus' (CI does) to run this test");
        int promPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            promPort = s.getLocalPort();
        }
        Files.writeString(dir.resolve("token"), TOKEN);
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: with-token
                    metrics_path: /actuator/prometheus
                    authorization:
                      type: Bearer
                      credentials_file: %s
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                  - job_name: without-token
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(dir.resolve("token"), port, port));
        prometheus = new ProcessBuilder(PROMETHEUS.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + promPort, "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();

        String base = "http://127.0.0.1:" + promPort;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        double with = -1;
        double without = -1;
        while (System.nanoTime() < deadline && !(with >= 3 && without == 0)) {
            assertThat(prometheus.isAlive()).as("prometheus exited: %s", Files.readString(dir.resolve("prometheus.log"))).isTrue();
            with = value(base, "sum_over_time(up{job=\"with-token\"}[5m])");
            without = value(base, "max_over_time(up{job=\"without-token\"}[5m])");
            Thread.sleep(500);
        }
        assertThat(with).as("successful scrapes with the token").isGreaterThanOrEqualTo(3);
        assertThat(without).as("up of the scrape job without the token").isZero();
        assertThat(value(base, "count(gosched_goroutines{job=\"with-token\"})")).as("gosched metrics scraped").isPositive();
    }

    /** The first value of a PromQL query, or -1 while Prometheus has none (or is still starting). */
    private double value(String base, String promql) throws InterruptedException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query="
                    + URLEncoder.encode(promql, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode result = JsonMapper.builder().build().readTree(r.body()).path("data").path("result");
            return result.isEmpty() ? -1 : Double.parseDouble(result.get(0).get("value").get(1).asString());
        } catch (IOException | RuntimeException notYet) {
            return -1;
        }
    }
}
