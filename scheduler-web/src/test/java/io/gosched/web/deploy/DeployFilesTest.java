package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * docker-compose.yml, the Dockerfile and deploy/ checked without a Docker engine: YAML parses, the
 * services wire together (health checks, depends_on conditions, mounts that exist), and
 * {@code promtool} accepts the scrape config where it is installed.
 */
class DeployFilesTest {

    private static final Path ROOT = Dashboard.repoRoot();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> yaml(String path) throws IOException {
        return (Map<String, Object>) new Yaml().load(Files.readString(ROOT.resolve(path)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @Test
    void composeWiresAppPrometheusGrafanaAndK6() throws IOException {
        Map<String, Object> services = map(yaml("docker-compose.yml").get("services"));
        assertThat(services).containsOnlyKeys("app", "prometheus", "grafana", "k6");

        for (String s : List.of("app", "prometheus", "grafana")) {
            assertThat(map(services.get(s))).as(s).containsKey("healthcheck");
        }
        assertThat(map(services.get("app")).get("build")).isEqualTo(".");
        assertThat(map(map(map(services.get("prometheus")).get("depends_on")).get("app")).get("condition")).isEqualTo("service_healthy");
        assertThat(map(map(map(services.get("grafana")).get("depends_on")).get("prometheus")).get("condition")).isEqualTo("service_healthy");

        Map<String, Object> k6 = map(services.get("k6"));
        assertThat((List<String>) k6.get("profiles")).containsExactly("load");
        assertThat(map(map(k6.get("depends_on")).get("app")).get("condition")).isEqualTo("service_healthy");
        assertThat(map(k6.get("environment")).get("K6_PROMETHEUS_RW_SERVER_URL")).isEqualTo("http://prometheus:9090/api/v1/write");
        assertThat((List<String>) map(services.get("prometheus")).get("command")).contains("--web.enable-remote-write-receiver");

        Map<String, Object> grafanaEnv = map(map(services.get("grafana")).get("environment"));
        assertThat(grafanaEnv).containsEntry("GF_AUTH_ANONYMOUS_ENABLED", "true").containsEntry("GF_AUTH_ANONYMOUS_ORG_ROLE", "Viewer");

        for (String s : List.of("prometheus", "grafana", "k6")) {
            Map<String, Object> svc = map(services.get(s));
            assertThat((String) svc.get("image")).as("%s pins its tag", s).matches("[a-z0-9/_-]+:v?[0-9][0-9.]*");
            for (String volume : (List<String>) svc.get("volumes")) {
                Path host = ROOT.resolve(volume.split(":")[0]).normalize();
                assertThat(host).as("%s mounts %s", s, volume).exists();
            }
        }
        String k6Script = Files.readString(ROOT.resolve("deploy/loadtest/submit-jobs.js"));
        assertThat(k6Script).contains("/api/v1/jobs", "'fan-out-fan-in'", "http://app:8080");
        // One token for both: the app requires it, k6 sends it on every call.
        assertThat(map(map(services.get("app")).get("environment"))).containsEntry("GOSCHED_API_TOKEN", "${GOSCHED_TOKEN:-}");
        assertThat(map(k6.get("environment"))).containsEntry("GOSCHED_TOKEN", "${GOSCHED_TOKEN:-}");
        assertThat(k6Script).contains("__ENV.GOSCHED_TOKEN", "Authorization: `Bearer ${TOKEN}`", "headers: AUTH",
                "Object.assign({ 'Content-Type': 'application/json' }, AUTH)");
    }

    @Test
    @SuppressWarnings("unchecked")
    void clusterComposeRunsThreeNodesOnPersistentJetStreamWithPrometheusGrafanaAndK6OnEveryNode() throws IOException {
        Map<String, Object> file = yaml("docker-compose.cluster.yml");
        Map<String, Object> services = map(file.get("services"));
        assertThat(services).containsOnlyKeys("nats", "node-1", "node-2", "node-3", "prometheus", "grafana", "k6");

        Map<String, Object> nats = map(services.get("nats"));
        assertThat((List<String>) nats.get("command")).as("JetStream with its store on the volume").contains("-js", "-sd", "/data");
        assertThat((List<String>) nats.get("volumes")).containsExactly("nats-data:/data");
        assertThat(map(file.get("volumes"))).containsKey("nats-data");
        assertThat((String) nats.get("image")).matches("nats:2\\.9\\.[0-9]+-alpine");
        assertThat(nats).containsKey("healthcheck");

        Set<String> ids = new HashSet<>();
        Set<String> hostPorts = new HashSet<>();
        for (String n : List.of("node-1", "node-2", "node-3")) {
            Map<String, Object> node = map(services.get(n));
            assertThat(node.get("build")).as(n).isEqualTo(".");
            assertThat(node).as(n).containsKey("healthcheck");
            assertThat(map(map(node.get("depends_on")).get("nats")).get("condition")).isEqualTo("service_healthy");
            List<String> args = (List<String>) node.get("command");
            assertThat(args).as(n).contains("--gosched.cluster.nats.url=nats://nats:4222");
            args.stream().filter(a -> a.startsWith("--gosched.cluster.node-id=")).forEach(a -> ids.add(a.substring(a.indexOf('=') + 1)));
            hostPorts.add(((List<String>) node.get("ports")).get(0).split(":")[0]);
            assertThat(map(node.get("environment"))).containsEntry("GOSCHED_API_TOKEN", "${GOSCHED_TOKEN:-}");
            assertThat(map(map(map(services.get("prometheus")).get("depends_on")).get(n)).get("condition")).isEqualTo("service_healthy");
            assertThat(map(map(map(services.get("k6")).get("depends_on")).get(n)).get("condition")).isEqualTo("service_healthy");
        }
        assertThat(ids).as("one node id each").containsExactlyInAnyOrder("node-1", "node-2", "node-3");
        assertThat(hostPorts).hasSize(3);

        Map<String, Object> prom = map(services.get("prometheus"));
        assertThat((List<String>) prom.get("command")).contains("--config.file=/etc/prometheus/prometheus-cluster.yml",
                "--web.enable-remote-write-receiver");
        Map<String, Object> job = map(((List<Object>) yaml("deploy/prometheus/prometheus-cluster.yml").get("scrape_configs")).get(0));
        assertThat(job.get("metrics_path")).isEqualTo("/actuator/prometheus");
        assertThat((List<String>) map(((List<Object>) job.get("static_configs")).get(0)).get("targets"))
                .containsExactly("node-1:8080", "node-2:8080", "node-3:8080");

        Map<String, Object> k6 = map(services.get("k6"));
        assertThat((List<String>) k6.get("profiles")).containsExactly("load");
        assertThat(map(k6.get("environment"))).containsEntry("GOSCHED_URLS", "http://node-1:8080,http://node-2:8080,http://node-3:8080")
                .containsEntry("K6_PROMETHEUS_RW_SERVER_URL", "http://prometheus:9090/api/v1/write");
        assertThat(Files.readString(ROOT.resolve("deploy/loadtest/submit-jobs.js"))).contains("__ENV.GOSCHED_URLS", "/recv", "/send");

        for (String s : List.of("prometheus", "grafana", "k6")) {
            for (String volume : (List<String>) map(services.get(s)).get("volumes")) {
                assertThat(ROOT.resolve(volume.split(":")[0]).normalize()).as("%s mounts %s", s, volume).exists();
            }
        }
    }

    @Test
    void clusterComposeV1AcceptsTheFileWithoutAnEngine() throws Exception {
        Path compose = Path.of("/usr/bin/docker-compose");
        assumeTrue(Files.isExecutable(compose), "/usr/bin/docker-compose missing: install Debian package 'docker-compose' to run this check");
        assertThat(run(compose.toString(), "-f", ROOT.resolve("docker-compose.cluster.yml").toString(), "config", "-q")).isEmpty();
    }

    @Test
    void promtoolAcceptsTheClusterScrapeConfig() throws Exception {
        Path promtool = Path.of("/usr/bin/promtool");
        assumeTrue(Files.isExecutable(promtool), "/usr/bin/promtool missing: install Debian package 'prometheus'");
        assertThat(run(promtool.toString(), "check", "config", ROOT.resolve("deploy/prometheus/prometheus-cluster.yml").toString()))
                .contains("SUCCESS");
    }

    @Test
    void dockerfileBuildsOnTemurin25AndRunsTheJarWithoutFlags() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        assertThat(dockerfile).contains("FROM eclipse-temurin:25-jdk AS build", "FROM eclipse-temurin:25-jre",
                "-pl scheduler-web -am", "ENTRYPOINT [\"java\", \"-jar\", \"/app/app.jar\"]");
        assertThat(dockerfile).doesNotContain("--add-exports", "--add-opens", "--enable-preview");
        assertThat(dockerfile).as("the JVM options GoRuntime.start requires, for every java in the image")
                .contains("ENV JDK_JAVA_OPTIONS=\"-XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread ");
        assertThat(dockerfile).as("the recommended compact object headers (README, \"Which JVM options\")")
                .contains("-XX:+UseCompactObjectHeaders\"");
    }

    @Test
    void prometheusScrapesTheActuatorEndpointOfTheAppService() throws IOException {
        Map<String, Object> job = map(((List<Object>) yaml("deploy/prometheus/prometheus.yml").get("scrape_configs")).get(0));
        assertThat(job.get("metrics_path")).isEqualTo("/actuator/prometheus");
        assertThat((List<String>) map(((List<Object>) job.get("static_configs")).get(0)).get("targets")).containsExactly("app:8080");
    }

    @Test
    void grafanaProvisioningPointsAtTheDashboardsAndTheDatasourceUidPanelsUse() throws IOException {
        Map<String, Object> ds = map(((List<Object>) yaml("deploy/grafana/provisioning/datasources/prometheus.yml").get("datasources")).get(0));
        assertThat(ds).containsEntry("uid", "prometheus").containsEntry("url", "http://prometheus:9090").containsEntry("type", "prometheus");
        Map<String, Object> provider = map(((List<Object>) yaml("deploy/grafana/provisioning/dashboards/provider.yml").get("providers")).get(0));
        assertThat(map(provider.get("options")).get("path")).isEqualTo("/var/lib/grafana/dashboards");
    }

    @Test
    void composeV1AcceptsTheFileWithoutAnEngine() throws Exception {
        Path compose = Path.of("/usr/bin/docker-compose");
        assumeTrue(Files.isExecutable(compose), "/usr/bin/docker-compose missing: install Debian package 'docker-compose' to run this check");
        assertThat(run(compose.toString(), "-f", ROOT.resolve("docker-compose.yml").toString(), "config", "-q")).isEmpty();
        assertThat(run(compose.toString(), "-f", ROOT.resolve("docker-compose.yml").toString(), "--profile", "load",
                "config", "--services").lines().toList()).containsExactlyInAnyOrder("app", "prometheus", "grafana", "k6");
    }

    /** Runs a command from the repository root; fails on a non-zero exit; returns its output. */
    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(ROOT.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s finished", List.of(command)).isTrue();
        assertThat(p.exitValue()).as("%s: %s", List.of(command), out).isZero();
        return out.strip();
    }

    @Test
    void promtoolAcceptsTheScrapeConfig() throws Exception {
        Path promtool = Path.of("/usr/bin/promtool");
        assumeTrue(Files.isExecutable(promtool), "/usr/bin/promtool missing: install Debian package 'prometheus'");
        assertThat(run(promtool.toString(), "check", "config", ROOT.resolve("deploy/prometheus/prometheus.yml").toString()))
                .contains("SUCCESS");
    }
}
