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
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * docker-compose.yml, the Dockerfile and deploy/ checked without a Docker engine: YAML parses, the
 * services wire together (health checks, depends_on conditions, mounts that exist, image names from
 * variables with pinned official defaults), and {@code promtool} accepts the scrape config where it
 * is installed. ComposeStackTest and ComposeClusterStackTest run the files for real.
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

    /** {@code ${VARIABLE:-default}}: the variable and its default, or fails naming the value. */
    private static String[] variable(Object value) {
        Matcher m = VARIABLE.matcher(String.valueOf(value));
        assertThat(m.matches()).as("%s is ${VARIABLE:-default}", value).isTrue();
        return new String[] {m.group(1), m.group(2)};
    }

    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Z0-9_]+):-([^}]*)}");

    /** An image named by a variable whose default is an official image with a pinned tag. */
    private static void assertImage(Map<String, Object> service, String name, String variable, String defaultPattern) {
        String[] image = variable(service.get("image"));
        assertThat(image[0]).as("%s's image variable", name).isEqualTo(variable);
        assertThat(image[1]).as("%s's default image, pinned", name).matches(defaultPattern);
    }

    @SuppressWarnings("unchecked")
    private static void assertMountsExist(String name, Map<String, Object> service) {
        for (String volume : (List<String>) service.get("volumes")) {
            String host = volume.split(":")[0];
            if (host.startsWith("./")) {
                assertThat(ROOT.resolve(host).normalize()).as("%s mounts %s", name, volume).exists();
            }
        }
    }

    /** The project's image: built from the Dockerfile with the base images as arguments, named by GOSCHED_IMAGE. */
    private static void assertBuildsTheProjectImage(String name, Map<String, Object> service) {
        Map<String, Object> build = map(service.get("build"));
        assertThat(build.get("context")).as(name).isEqualTo(".");
        assertThat(variable(map(build.get("args")).get("JDK_IMAGE"))).containsExactly("GOSCHED_JDK_IMAGE", "eclipse-temurin:25-jdk");
        assertThat(variable(map(build.get("args")).get("BASE_IMAGE"))).containsExactly("GOSCHED_BASE_IMAGE", "debian:bookworm-slim");
        assertThat(variable(service.get("image"))).containsExactly("GOSCHED_IMAGE", "gosched:local");
        assertThat(service).as("%s: health is the image's HEALTHCHECK", name).doesNotContainKey("healthcheck");
        assertThat(map(service.get("environment"))).as(name).containsEntry("GOSCHED_API_TOKEN", "${GOSCHED_TOKEN:-}")
                .containsKey("SPRING_APPLICATION_JSON");
    }

    /** The wrk load test of the "load" profile: its image built on the Debian base, the scripts mounted. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> assertLoadTest(Map<String, Object> services, String targets) {
        Map<String, Object> load = map(services.get("loadtest"));
        assertThat((List<String>) load.get("profiles")).containsExactly("load");
        assertThat(variable(load.get("image"))).containsExactly("GOSCHED_LOADTEST_IMAGE", "gosched-loadtest:local");
        assertThat(map(load.get("build")).get("context")).isEqualTo("deploy/loadtest");
        assertThat(variable(map(map(load.get("build")).get("args")).get("BASE_IMAGE"))).containsExactly("GOSCHED_BASE_IMAGE", "debian:bookworm-slim");
        assertThat(map(load.get("environment"))).containsEntry("LOAD_TARGETS", targets).containsEntry("GOSCHED_TOKEN", "${GOSCHED_TOKEN:-}")
                .containsKeys("LOAD_WARMUP_SECONDS", "LOAD_RAMP", "LOAD_STAGE_SECONDS", "LOAD_STEADY_SECONDS", "LOAD_MAX_P99_MS");
        assertThat((List<String>) load.get("volumes")).contains("./deploy/loadtest:/loadtest:ro", "${LOAD_RESULTS_DIR:-./deploy/loadtest/results}:/results");
        assertThat(map(map(load.get("depends_on")).get("prometheus")).get("condition")).isEqualTo("service_healthy");
        assertMountsExist("loadtest", load);
        return load;
    }

    @Test
    @SuppressWarnings("unchecked")
    void composeWiresAppPrometheusGrafanaTheLoadTestAndK6() throws IOException {
        Map<String, Object> services = map(yaml("docker-compose.yml").get("services"));
        assertThat(services).containsOnlyKeys("app", "prometheus", "grafana", "loadtest", "k6");

        assertBuildsTheProjectImage("app", map(services.get("app")));
        assertThat((List<String>) map(services.get("app")).get("ports")).containsExactly("${GOSCHED_PORT:-8080}:8080");
        for (String s : List.of("prometheus", "grafana")) {
            assertThat(map(services.get(s))).as(s).containsKey("healthcheck");
        }
        assertThat(map(map(map(services.get("prometheus")).get("depends_on")).get("app")).get("condition")).isEqualTo("service_healthy");
        assertThat(map(map(map(services.get("grafana")).get("depends_on")).get("prometheus")).get("condition")).isEqualTo("service_healthy");
        assertImage(map(services.get("prometheus")), "prometheus", "GOSCHED_PROMETHEUS_IMAGE", "prom/prometheus:v[0-9.]+");
        assertImage(map(services.get("grafana")), "grafana", "GOSCHED_GRAFANA_IMAGE", "grafana/grafana-oss:[0-9.]+");
        assertImage(map(services.get("k6")), "k6", "GOSCHED_K6_IMAGE", "grafana/k6:[0-9.]+");
        assertThat((List<String>) map(services.get("prometheus")).get("command")).contains("--web.enable-remote-write-receiver",
                "--storage.tsdb.path=/prometheus");

        Map<String, Object> load = assertLoadTest(services, "http://app:8080");
        assertThat(map(map(load.get("depends_on")).get("app")).get("condition")).isEqualTo("service_healthy");

        Map<String, Object> k6 = map(services.get("k6"));
        assertThat((List<String>) k6.get("profiles")).containsExactly("k6");
        assertThat(map(map(k6.get("depends_on")).get("app")).get("condition")).isEqualTo("service_healthy");
        assertThat(map(k6.get("environment")).get("K6_PROMETHEUS_RW_SERVER_URL")).isEqualTo("http://prometheus:9090/api/v1/write");

        Map<String, Object> grafanaEnv = map(map(services.get("grafana")).get("environment"));
        assertThat(grafanaEnv).containsEntry("GF_AUTH_ANONYMOUS_ENABLED", "true").containsEntry("GF_AUTH_ANONYMOUS_ORG_ROLE", "Viewer");
        for (String s : List.of("prometheus", "grafana", "k6")) {
            assertMountsExist(s, map(services.get(s)));
        }
        String k6Script = Files.readString(ROOT.resolve("deploy/loadtest/submit-jobs.js"));
        assertThat(k6Script).contains("/api/v1/jobs", "'fan-out-fan-in'", "http://app:8080");
        // One token for all: the app requires it, the load generators send it on every call.
        assertThat(map(k6.get("environment"))).containsEntry("GOSCHED_TOKEN", "${GOSCHED_TOKEN:-}");
        assertThat(k6Script).contains("__ENV.GOSCHED_TOKEN", "Authorization: `Bearer ${TOKEN}`", "headers: AUTH",
                "Object.assign({ 'Content-Type': 'application/json' }, AUTH)");
    }

    @Test
    @SuppressWarnings("unchecked")
    void clusterComposeRunsThreeNodesOnPersistentJetStreamWithPrometheusGrafanaAndTheLoadTestOnEveryNode() throws IOException {
        Map<String, Object> file = yaml("docker-compose.cluster.yml");
        Map<String, Object> services = map(file.get("services"));
        assertThat(services).containsOnlyKeys("nats", "node-1", "node-2", "node-3", "prometheus", "grafana", "loadtest", "k6");

        Map<String, Object> nats = map(services.get("nats"));
        assertThat((List<String>) nats.get("command")).as("JetStream with its store on the volume").contains("-js", "-sd", "/data");
        assertThat((List<String>) nats.get("volumes")).containsExactly("nats-data:/data");
        assertThat(map(file.get("volumes"))).containsKey("nats-data");
        assertImage(nats, "nats", "GOSCHED_NATS_IMAGE", "nats:2\\.9\\.[0-9]+-alpine");
        assertThat(nats).containsKey("healthcheck");

        Set<String> ids = new HashSet<>();
        Set<String> hostPorts = new HashSet<>();
        for (String n : List.of("node-1", "node-2", "node-3")) {
            Map<String, Object> node = map(services.get(n));
            assertBuildsTheProjectImage(n, node);
            assertThat(map(map(node.get("depends_on")).get("nats")).get("condition")).isEqualTo("service_healthy");
            List<String> args = (List<String>) node.get("command");
            assertThat(args).as(n).contains("--gosched.cluster.nats.url=nats://nats:4222");
            args.stream().filter(a -> a.startsWith("--gosched.cluster.node-id=")).forEach(a -> ids.add(a.substring(a.indexOf('=') + 1)));
            hostPorts.add(variable(((List<String>) node.get("ports")).get(0).split(":8080")[0])[0]);
            assertThat(map(map(map(services.get("prometheus")).get("depends_on")).get(n)).get("condition")).isEqualTo("service_healthy");
            assertThat(map(map(map(services.get("loadtest")).get("depends_on")).get(n)).get("condition")).isEqualTo("service_healthy");
            assertThat(map(map(map(services.get("k6")).get("depends_on")).get(n)).get("condition")).isEqualTo("service_healthy");
        }
        assertThat(ids).as("one node id each").containsExactlyInAnyOrder("node-1", "node-2", "node-3");
        assertThat(hostPorts).as("a host port variable each").containsExactlyInAnyOrder("GOSCHED_NODE1_PORT", "GOSCHED_NODE2_PORT",
                "GOSCHED_NODE3_PORT");

        Map<String, Object> prom = map(services.get("prometheus"));
        assertImage(prom, "prometheus", "GOSCHED_PROMETHEUS_IMAGE", "prom/prometheus:v[0-9.]+");
        assertThat((List<String>) prom.get("command")).contains("--config.file=/etc/prometheus/prometheus-cluster.yml",
                "--storage.tsdb.path=/prometheus", "--web.enable-remote-write-receiver");
        Map<String, Object> job = map(((List<Object>) yaml("deploy/prometheus/prometheus-cluster.yml").get("scrape_configs")).get(0));
        assertThat(job.get("metrics_path")).isEqualTo("/actuator/prometheus");
        assertThat((List<String>) map(((List<Object>) job.get("static_configs")).get(0)).get("targets"))
                .containsExactly("node-1:8080", "node-2:8080", "node-3:8080");

        assertLoadTest(services, "http://node-1:8080,http://node-2:8080,http://node-3:8080");
        Map<String, Object> k6 = map(services.get("k6"));
        assertThat((List<String>) k6.get("profiles")).containsExactly("k6");
        assertThat(map(k6.get("environment"))).containsEntry("GOSCHED_URLS", "http://node-1:8080,http://node-2:8080,http://node-3:8080")
                .containsEntry("K6_PROMETHEUS_RW_SERVER_URL", "http://prometheus:9090/api/v1/write");
        assertThat(Files.readString(ROOT.resolve("deploy/loadtest/submit-jobs.js"))).contains("__ENV.GOSCHED_URLS", "/recv", "/send");

        for (String s : List.of("prometheus", "grafana", "k6")) {
            assertMountsExist(s, map(services.get(s)));
        }
    }

    @Test
    void everyImageVariableOfTheComposeFilesIsOneTheLocalImagesScriptSets() throws IOException {
        String script = Files.readString(ROOT.resolve("scripts/local-images.sh"));
        Set<String> variables = new TreeSet<>();
        for (String f : List.of("docker-compose.yml", "docker-compose.cluster.yml")) {
            Matcher m = Pattern.compile("\\$\\{(GOSCHED_[A-Z0-9_]*IMAGE):-").matcher(Files.readString(ROOT.resolve(f)));
            while (m.find()) {
                variables.add(m.group(1));
            }
        }
        // Grafana and k6 exist in no Debian package: they come from a registry or not at all.
        variables.removeAll(Set.of("GOSCHED_GRAFANA_IMAGE", "GOSCHED_K6_IMAGE"));
        assertThat(variables).containsExactlyInAnyOrder("GOSCHED_IMAGE", "GOSCHED_NATS_IMAGE", "GOSCHED_PROMETHEUS_IMAGE",
                "GOSCHED_LOADTEST_IMAGE", "GOSCHED_JDK_IMAGE", "GOSCHED_BASE_IMAGE");
        for (String v : variables) {
            assertThat(script).as("scripts/local-images.sh sets %s", v).contains(v + "=$");
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
    void dockerfileNeedsNoRegistryFrontendAndRunsTheServiceAsPid1WithTheRuntimesOptions() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        assertThat(dockerfile).as("a frontend line makes BuildKit fetch an image; the classic builder has no cache mounts")
                .doesNotContainPattern("(?m)^#\\s*syntax=").doesNotContain("--mount=");
        assertThat(dockerfile).contains("ARG JDK_IMAGE=eclipse-temurin:25-jdk", "ARG BASE_IMAGE=debian:bookworm-slim",
                "FROM ${JDK_IMAGE} AS build", "-pl scheduler-web -am", "jlink --add-modules");
        Matcher from = Pattern.compile("(?m)^FROM (\\S+)(?: AS \\S+)?$").matcher(dockerfile);
        List<String> froms = new java.util.ArrayList<>();
        while (from.find()) {
            froms.add(from.group(1));
        }
        assertThat(froms).as("every stage on a build argument's image").allMatch(f -> f.equals("${JDK_IMAGE}") || f.equals("${BASE_IMAGE}"));
        assertThat(froms.getLast()).as("the runtime layer: the jlinked JRE on the small base, not a JDK").isEqualTo("${BASE_IMAGE}");
        assertThat(dockerfile).containsPattern("(?m)^USER 10001$").containsPattern("(?m)^HEALTHCHECK ");
        assertThat(dockerfile).as("pid 1 is java with the options GoRuntime.start requires (and compact headers), not a shell")
                .contains("ENTRYPOINT [\"java\", \"-XX:+UnlockDiagnosticVMOptions\", \"-XX:DisableIntrinsic=_currentThread\", "
                        + "\"-XX:+UseCompactObjectHeaders\", \"-jar\", \"/app/app.jar\"]");
        assertThat(dockerfile).doesNotContain("--add-exports", "--add-opens", "--enable-preview", "ENV JDK_JAVA_OPTIONS");
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
        // compose 1.29's config lists the services of every profile (which profile holds what: the YAML tests above).
        assertThat(run(compose.toString(), "-f", ROOT.resolve("docker-compose.yml").toString(), "--profile", "load",
                "config", "--services").lines().toList()).containsExactlyInAnyOrder("app", "prometheus", "grafana", "loadtest", "k6");
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
