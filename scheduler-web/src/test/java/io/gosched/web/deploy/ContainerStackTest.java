package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.MountableFile;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The image from the project's Dockerfile next to the Prometheus image of docker-compose.yml, with
 * deploy/prometheus/prometheus.yml unchanged: Prometheus must find the app as {@code app:8080} and
 * hold gosched series. Needs a Docker engine; without one JUnit reports it skipped
 * ({@code disabledWithoutDocker}), as on the build machine, which covers the same path with the
 * Debian Prometheus binary in {@link PrometheusDashboardTest}.
 */
@Testcontainers(disabledWithoutDocker = true)
class ContainerStackTest {

    static final Path ROOT = Dashboard.repoRoot();
    static final Network NETWORK = Network.newNetwork();

    @Container
    static final GenericContainer<?> APP = new GenericContainer<>(new ImageFromDockerfile("gosched-test", false)
            .withFileFromPath(".", ROOT))
            .withNetwork(NETWORK)
            .withNetworkAliases("app")
            .withExposedPorts(8080)
            .waitingFor(Wait.forHttp("/actuator/health/readiness").forPort(8080).withStartupTimeout(Duration.ofMinutes(10)));

    @Container
    static final GenericContainer<?> PROMETHEUS = new GenericContainer<>("prom/prometheus:v2.53.0")
            .withNetwork(NETWORK)
            .dependsOn(APP)
            .withCopyFileToContainer(MountableFile.forHostPath(ROOT.resolve("deploy/prometheus/prometheus.yml")),
                    "/etc/prometheus/prometheus.yml")
            .withExposedPorts(9090)
            .waitingFor(Wait.forHttp("/-/ready").forPort(9090));

    @Test
    void prometheusScrapesTheImage() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://" + PROMETHEUS.getHost() + ":" + PROMETHEUS.getMappedPort(9090);
        URI uri = URI.create(base + "/api/v1/query?query=" + URLEncoder.encode("gosched_sched_gomaxprocs_threads", StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode result = null;
        while (System.nanoTime() < deadline) {
            String body = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
            result = JsonMapper.builder().build().readTree(body).path("data").path("result");
            if (!result.isEmpty()) {
                break;
            }
            Thread.sleep(1000);
        }
        assertThat(result).as("gosched series in the containerized Prometheus").isNotNull().isNotEmpty();
    }
}
