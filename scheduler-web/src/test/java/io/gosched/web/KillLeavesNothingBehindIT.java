package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One process per instance, whatever the launch: the service started exactly as the README says
 * (a plain {@code java -jar scheduler-web/target/scheduler-web-*.jar}, no JVM option, no
 * {@code JDK_JAVA_OPTIONS}; and {@code ./scripts/run.sh}) is one JVM, the very process that was
 * started, with the option goroutines need in force; and a SIGKILL of that pid, as systemd,
 * Kubernetes or the OOM killer send it, leaves within 5 s no JVM of that run and a free port.
 *
 * <p>A run is told apart from every other JVM on the machine by an application argument naming
 * it ({@code --it.run=<uuid>}): a relaunched JVM carries the same command line. Runs in failsafe's
 * integration-test phase, after {@code package} built the jar ({@code gosched.jar}).
 */
@Timeout(value = 10, unit = java.util.concurrent.TimeUnit.MINUTES) // two service start-ups of up to 3 minutes each on a loaded machine
class KillLeavesNothingBehindIT {

    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    /** What the issue promises an operator: everything of the run gone this soon after SIGKILL. */
    static final Duration GONE_WITHIN = Duration.ofSeconds(5);

    static Path jar() {
        String jar = System.getProperty("gosched.jar");
        assertThat(jar).as("failsafe passes gosched.jar, the jar package built").isNotNull();
        Path p = Path.of(jar).toAbsolutePath();
        assertThat(p).as("the service jar").exists();
        return p;
    }

    /** The project's root: scheduler-web/target/the.jar is three levels below it. */
    static Path root() {
        return jar().getParent().getParent().getParent();
    }

    @Test
    void javaDashJarAsTheReadmeSaysIsOneJvmAndSigkillLeavesNothingBehind() throws Exception {
        Path root = root();
        String relativeJar = root.relativize(jar()).toString(); // java -jar scheduler-web/target/scheduler-web-*.jar
        assertThat(relativeJar).matches("scheduler-web/target/scheduler-web-.*\\.jar");
        startKillAndCheck("java-jar", List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", relativeJar));
    }

    @Test
    void runScriptAsTheReadmeSaysIsOneJvmAndSigkillLeavesNothingBehind() throws Exception {
        Path root = root();
        // run.sh builds first when a source is newer than the jar; a test must not start a build.
        Optional<Path> newer = newerSource(root, Files.getLastModifiedTime(jar()));
        assumeTrue(newer.isEmpty(), () -> "scripts/run.sh would rebuild the jar first (" + newer.orElseThrow()
                + " is newer than it); the java -jar test covers the launch");
        startKillAndCheck("run.sh", List.of(root.resolve("scripts/run.sh").toString()));
    }

    private static Optional<Path> newerSource(Path root, FileTime jarTime) throws IOException {
        for (String module : List.of("scheduler-core", "scheduler-api", "scheduler-web")) {
            Path src = root.resolve(module).resolve("src");
            try (Stream<Path> files = Files.walk(src)) {
                Optional<Path> hit = files.filter(Files::isRegularFile).filter(f -> {
                    try {
                        return Files.getLastModifiedTime(f).compareTo(jarTime) > 0;
                    } catch (IOException e) {
                        return false;
                    }
                }).findFirst();
                if (hit.isPresent()) {
                    return hit;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Starts launch (plus a free loopback port and the run's name as application arguments) in
     * the project's root, with no JVM options in the environment; waits until it serves; checks
     * it is one JVM, the started pid, running with the stale-currentThread option in force;
     * SIGKILLs that pid and checks that within 5 s no JVM of the run is left and the port is free.
     * Whatever of the run is still alive at the end is killed.
     */
    private static void startKillAndCheck(String name, List<String> launch) throws Exception {
        Path root = root();
        Path dir = Path.of("target", "kill-it");
        Files.createDirectories(dir);
        Path log = dir.resolve(name + ".log");
        int port = freePort();
        String run = "--it.run=" + UUID.randomUUID();
        List<String> cmd = new ArrayList<>(launch);
        cmd.addAll(List.of("--server.port=" + port, "--server.address=127.0.0.1", run));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        // A plain launch: no option reaches the JVM but the command line's (the test JVM's own
        // environment may carry them, as the Dockerfile's image does).
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("GOSCHED_RELAUNCHED");
        Process started = pb.start();
        try {
            awaitServing(started, port, log);
            List<Long> jvms = processesOf(run).stream().map(ProcessHandle::pid).toList();
            List<Long> children = started.toHandle().descendants().map(ProcessHandle::pid).toList();
            List<String> args = Arrays.asList(started.info().arguments().orElse(new String[0]));
            String output = Files.readString(log);

            started.toHandle().destroyForcibly(); // SIGKILL, of the pid the user started
            long deadline = System.nanoTime() + GONE_WITHIN.toNanos();
            List<ProcessHandle> left;
            boolean portFree;
            do {
                Thread.sleep(50);
                left = processesOf(run);
                portFree = portFree(port);
            } while ((!left.isEmpty() || !portFree) && System.nanoTime() < deadline);
            assertThat(left).as("%s: processes of the run alive %s after SIGKILL of pid %d: %s", name, GONE_WITHIN,
                    started.pid(), describe(left)).isEmpty();
            assertThat(portFree).as("%s: port %d free %s after SIGKILL", name, port, GONE_WITHIN).isTrue();

            assertThat(jvms).as("%s: the processes of the run while it served (pids), started pid %d", name, started.pid())
                    .containsExactly(started.pid());
            assertThat(children).as("%s: processes started by the service's pid", name).isEmpty();
            // The process that served is the started pid; its command line carries the option.
            assertThat(args).as("%s: the serving JVM's options", name)
                    .contains("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread");
            assertThat(output).as("%s: the service's output", name).doesNotContain("restricted method");
        } finally {
            for (ProcessHandle p : processesOf(run)) {
                p.destroyForcibly();
            }
            started.destroyForcibly();
        }
    }

    /** Every live process whose command line carries the run's argument. */
    static List<ProcessHandle> processesOf(String run) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().arguments().map(a -> Arrays.asList(a).contains(run)).orElse(false))
                .toList();
    }

    private static String describe(List<ProcessHandle> ps) {
        return ps.stream().map(p -> "pid " + p.pid() + " (parent " + p.parent().map(ProcessHandle::pid).orElse(-1L) + ") "
                + p.info().commandLine().orElse("?")).toList().toString();
    }

    private static void awaitServing(Process p, int port, Path log) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        while (true) {
            assertThat(p.isAlive()).as("the service exited at start-up:%n%s", Files.readString(log)).isTrue();
            try {
                HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            assertThat(System.nanoTime() < deadline).as("the service did not start in 180 s:%n%s", Files.readString(log)).isTrue();
            Thread.sleep(200);
        }
    }

    /** Whether a new instance could listen on port now. */
    static boolean portFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
