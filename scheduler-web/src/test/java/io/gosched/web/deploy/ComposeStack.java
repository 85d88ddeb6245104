package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.cluster.testing.DockerCondition;
import io.gosched.cluster.testing.Images;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * One of the project's compose files brought up by Debian's {@code docker-compose} (1.29; the same
 * files work with {@code docker compose} v2), as a JUnit extension: the named services come up
 * healthy before the class's tests and go, volumes and all, after them. Each stack gets its own
 * project name and free host ports (the files read them from the environment), and the image names
 * of {@link Images} (the official images unless the environment names local builds). When a test
 * fails, the services' last log lines go to standard error, so a CI log says why.
 *
 * <p>Register with {@code @RegisterExtension static final ComposeStack STACK = ...} on a
 * {@code @RequiresDocker} class: JUnit evaluates that condition before this extension starts anything.
 */
public final class ComposeStack implements BeforeAllCallback, AfterAllCallback, TestWatcher {

    static final Path COMPOSE = Path.of("/usr/bin/docker-compose");
    /** docker-compose up waits for health (depends_on); a cold JVM on two busy cores may take minutes. */
    static final Duration UP_TIMEOUT = Duration.ofMinutes(8);

    private final Path file;
    private final List<String> services;
    private final String project = "gosched-it-" + UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, String> env = new HashMap<>();
    private final Map<String, Integer> ports = new HashMap<>();

    private ComposeStack(String file, List<String> services, List<String> portVariables) {
        this.file = Dashboard.repoRoot().resolve(file);
        this.services = List.copyOf(services);
        for (String what : List.of("gosched", "nats", "prometheus", "loadtest", "jdk", "base")) {
            String given = Images.name(what, "");
            if (!given.isEmpty()) {
                env.put(Images.variable(what), given);
            }
        }
        List<Integer> free = freePorts(portVariables.size());
        for (int i = 0; i < portVariables.size(); i++) {
            ports.put(portVariables.get(i), free.get(i));
            env.put(portVariables.get(i), String.valueOf(free.get(i)));
        }
    }

    /** docker-compose.yml: the service and Prometheus (Grafana stays out: no registry serves it here). */
    static ComposeStack single() {
        return new ComposeStack("docker-compose.yml", List.of("app", "prometheus"),
                List.of("GOSCHED_PORT", "PROMETHEUS_PORT", "GRAFANA_PORT"));
    }

    /** docker-compose.cluster.yml: NATS, three nodes and Prometheus. */
    static ComposeStack cluster() {
        return new ComposeStack("docker-compose.cluster.yml", List.of("nats", "node-1", "node-2", "node-3", "prometheus"),
                List.of("GOSCHED_NODE1_PORT", "GOSCHED_NODE2_PORT", "GOSCHED_NODE3_PORT", "NATS_PORT", "NATS_MONITOR_PORT",
                        "PROMETHEUS_PORT", "GRAFANA_PORT"));
    }

    /** Sets a variable the compose file reads (SPRING_APPLICATION_JSON for the nodes, LOAD_* for the load test). */
    ComposeStack with(String variable, String value) {
        env.put(variable, value);
        return this;
    }

    /** The host port published for a port variable of the file, e.g. {@code GOSCHED_NODE1_PORT}. */
    int port(String variable) {
        return ports.get(variable);
    }

    String url(String portVariable) {
        return "http://127.0.0.1:" + port(portVariable);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        DockerCondition.requireOrSkip(Files.isExecutable(COMPOSE),
                COMPOSE + " missing: install Debian's docker-compose (apt-get install docker-compose)");
        List<String> up = new ArrayList<>(List.of("up", "-d", "--no-color"));
        up.addAll(services);
        Result r = compose(UP_TIMEOUT, up);
        if (r.exit() != 0) {
            String failure = "docker-compose " + String.join(" ", up) + " failed (exit " + r.exit() + "):\n" + r.output() + "\n" + logs(200);
            down();
            throw new AssertionError(failure);
        }
        awaitHealthy(Duration.ofMinutes(3));
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        down();
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        System.err.println("== " + context.getDisplayName() + " failed; the stack's last log lines:\n" + logs(60));
    }

    /** Every started service whose image has a health check reports healthy, and none has exited. */
    void awaitHealthy(Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        String states = "";
        while (System.nanoTime() < deadline) {
            Result ids = compose(Duration.ofMinutes(1), List.of("ps", "-q"));
            List<String> containers = ids.output().lines().map(String::strip).filter(l -> l.matches("[0-9a-f]{12,}")).toList();
            List<String> inspect = new ArrayList<>(List.of("docker", "inspect", "-f",
                    "{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}"));
            inspect.addAll(containers);
            states = run(Duration.ofMinutes(1), inspect).output();
            boolean allUp = containers.size() >= services.size() && states.lines()
                    .allMatch(l -> l.contains(" running ") && (l.endsWith(" healthy") || l.endsWith(" none")));
            if (allUp) {
                return;
            }
            assertThat(states).as("a service exited; logs:\n%s", logs(100)).doesNotContain(" exited ");
            Thread.sleep(1000);
        }
        throw new AssertionError("services not healthy within " + within + ":\n" + states + "\n" + logs(100));
    }

    /** docker kill (SIGKILL) of one service's container. */
    void kill(String service) throws Exception {
        Result r = compose(Duration.ofMinutes(1), List.of("kill", "-s", "SIGKILL", service));
        assertThat(r.exit()).as("docker-compose kill %s: %s", service, r.output()).isZero();
    }

    /** Runs a one-off container of a service (a profile's, say) to its end: {@code docker-compose run --rm}. */
    Result run(String service, Duration timeout) throws Exception {
        return compose(timeout, List.of("run", "--rm", "-T", service));
    }

    /** The last lines each service logged. */
    String logs(int lines) {
        try {
            return compose(Duration.ofMinutes(1), List.of("logs", "--no-color", "--tail=" + lines)).output();
        } catch (Exception e) {
            return "(no logs: " + e + ")";
        }
    }

    private void down() throws Exception {
        Result r = compose(Duration.ofMinutes(3), List.of("down", "-v", "--remove-orphans", "-t", "10"));
        if (r.exit() != 0) {
            System.err.println("docker-compose down failed: " + r.output());
        }
    }

    record Result(int exit, String output) {}

    Result compose(Duration timeout, List<String> args) throws Exception {
        List<String> command = new ArrayList<>(List.of(COMPOSE.toString(), "-p", project, "-f", file.toString()));
        command.addAll(args);
        return run(timeout, command);
    }

    private Result run(Duration timeout, List<String> command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(file.getParent().toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread reader = Thread.ofVirtual().start(() -> copy(p.getInputStream(), out));
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            reader.join(Duration.ofSeconds(5));
            throw new AssertionError(String.join(" ", command) + " did not finish within " + timeout + ":\n" + out.toString(StandardCharsets.UTF_8));
        }
        reader.join(Duration.ofSeconds(10));
        return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** n distinct free ports: every socket stays open until all are chosen, or the kernel may hand one out twice. */
    private static List<Integer> freePorts(int n) {
        List<ServerSocket> open = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                open.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
            }
            return open.stream().map(ServerSocket::getLocalPort).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket s : open) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing a listening socket that was never used: nothing to recover
                }
            }
        }
    }
}
