package io.gosched.web.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.deploy.LocalPrometheus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * With {@code gosched.api.security.prometheus-public=false}, a real Prometheus (Debian's binary)
 * scrapes {@code /actuator/prometheus} with the token in its scrape config, as
 * {@code deploy/prometheus/prometheus.yml} documents, while a scrape job without it is refused.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "gosched.api.token=" + ProtectedPrometheusScrapeTest.TOKEN, "gosched.api.security.prometheus-public=false"})
class ProtectedPrometheusScrapeTest {

    static final String TOKEN = "scrape-token-0123456789";

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    private LocalPrometheus prometheus;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @AfterEach
    void stopPrometheus() throws InterruptedException {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @Test
    void prometheusScrapesWithTheTokenAndNotWithout() throws Exception {
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));

        assumeTrue(Files.isExecutable(LocalPrometheus.BINARY), LocalPrometheus.MISSING);
        Files.writeString(dir.resolve("token"), TOKEN);
        prometheus = LocalPrometheus.start(dir, """
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

        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        double with = -1;
        double without = -1;
        while (System.nanoTime() < deadline && !(with >= 3 && without == 0)) {
            assertThat(prometheus.alive()).as("prometheus exited: %s", prometheus.log()).isTrue();
            with = prometheus.value("sum_over_time(up{job=\"with-token\"}[5m])");
            without = prometheus.value("max_over_time(up{job=\"without-token\"}[5m])");
            Thread.sleep(500);
        }
        assertThat(with).as("successful scrapes with the token").isGreaterThanOrEqualTo(3);
        assertThat(without).as("up of the scrape job without the token").isZero();
        assertThat(prometheus.value("count(gosched_goroutines{job=\"with-token\"})")).as("gosched metrics scraped").isPositive();
    }
}
