package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.TopContainerResponse;
import io.gosched.cluster.testing.Images;
import io.gosched.cluster.testing.RequiresDocker;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.testcontainers.DockerClientFactory;
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
 * The project's image next to the Prometheus image of docker-compose.yml, with
 * deploy/prometheus/prometheus.yml unchanged: the image's own health check passes, java is the
 * container's pid 1 and its only process, run by a non-root user with the JVM options the runtime
 * requires, Prometheus finds the app as {@code app:8080} and holds gosched series, and a
 * {@code docker stop} ends the service gracefully.
 *
 * <p>The image is the one named by {@code GOSCHED_IMAGE} (CI builds it once, with
 * scripts/local-images.sh), else {@code gosched:local} where it exists, else built here from the
 * Dockerfile (minutes: Maven runs inside).
 */
@RequiresDocker
@Testcontainers
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ContainerStackTest {

    static final Path ROOT = Dashboard.repoRoot();
    static final Network NETWORK = Network.newNetwork();

    /** The options GoRuntime.start requires, and the recommended one, on pid 1's command line. */
    static final List<String> JVM_OPTIONS = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread",
            "-XX:+UseCompactObjectHeaders");

    @Container
    static final GenericContainer<?> APP = appContainer()
            .withNetwork(NETWORK)
            .withNetworkAliases("app")
            .withExposedPorts(8080)
            // The image's HEALTHCHECK (readiness UP) is what compose's depends_on waits for.
            .waitingFor(Wait.forHealthcheck().withStartupTimeout(Duration.ofMinutes(10)));

    @Container
    static final GenericContainer<?> PROMETHEUS = new GenericContainer<>(Images.prometheus())
            .withNetwork(NETWORK)
            .dependsOn(APP)
            .withCommand("--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus")
            .withCopyFileToContainer(MountableFile.forHostPath(ROOT.resolve("deploy/prometheus/prometheus.yml")),
                    "/etc/prometheus/prometheus.yml")
            .withExposedPorts(9090)
            .waitingFor(Wait.forHttp("/-/ready").forPort(9090));

    @SuppressWarnings("resource") // closed by the Testcontainers extension
    static GenericContainer<?> appContainer() {
        String name = Images.gosched();
        boolean present = !DockerClientFactory.instance().client().listImagesCmd().withImageNameFilter(name).exec().isEmpty();
        if (Images.goschedNamed() || present) {
            return new GenericContainer<>(name);
        }
        return new GenericContainer<>(new ImageFromDockerfile("gosched-test", false)
                .withDockerfile(ROOT.resolve("Dockerfile"))
                .withBuildArg("JDK_IMAGE", Images.jdk())
                .withBuildArg("BASE_IMAGE", Images.base()));
    }

    @Test
    @Order(1)
    void javaIsPid1AndTheOnlyProcessRunByANonRootUserWithTheRuntimesOptions() {
        InspectContainerResponse info = APP.getContainerInfo();
        assertThat(info.getConfig().getUser()).as("the image's user").isNotBlank().isNotIn("root", "0");

        TopContainerResponse top = APP.getDockerClient().topContainerCmd(APP.getContainerId()).withPsArgs("-o pid,user,args").exec();
        List<String> titles = Arrays.asList(top.getTitles());
        int args = titles.indexOf("COMMAND") >= 0 ? titles.indexOf("COMMAND") : titles.size() - 1;
        List<String> java = Arrays.stream(top.getProcesses())
                .filter(p -> !p[args].startsWith("bash -c exec 3<>/dev/tcp") && !p[args].startsWith("grep ")) // a health check in flight
                .map(p -> p[args]).toList();
        assertThat(java).as("the container's processes (host pids), health checks aside").hasSize(1);
        assertThat(java.getFirst()).startsWith("java ").contains(JVM_OPTIONS).endsWith("-jar /app/app.jar");
        assertThat(info.getState().getPid()).as("the process docker signals is the JVM itself").isPositive();
        assertThat(APP.getLogs()).as("the service reports itself as pid 1").contains("with PID 1 ");
    }

    @Test
    @Order(2)
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

    @Test
    @Order(3)
    void dockerStopEndsTheServiceGracefully() {
        APP.getDockerClient().stopContainerCmd(APP.getContainerId()).withTimeout(30).exec();
        InspectContainerResponse.ContainerState state = APP.getDockerClient().inspectContainerCmd(APP.getContainerId()).exec().getState();
        assertThat(state.getRunning()).isFalse();
        // 143 = 128 + SIGTERM: the JVM ran its shutdown hooks and exited on the signal; 137 would be
        // docker's SIGKILL after the timeout, i.e. nobody handled the SIGTERM.
        assertThat(state.getExitCodeLong()).as("exit code; logs:\n%s", tail(APP.getLogs())).isEqualTo(143L);
        assertThat(APP.getLogs()).contains("Graceful shutdown complete");
    }

    private static String tail(String logs) {
        return logs.length() > 4000 ? logs.substring(logs.length() - 4000) : logs;
    }
}
