package io.gosched.web.cluster;

import io.gosched.GoschedApplication;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One gosched service node in a JVM of its own, started as a user starts the service (the
 * application's main class, command-line properties) from this test's class path, on a free
 * loopback port: so a test can SIGKILL it like a node that dies. Its output goes to a log file
 * in the test's directory, shown when it fails to start.
 */
public final class ServiceNode implements AutoCloseable {

    private final String id;
    private final Process process;
    private final Path log;
    private final int port;

    private ServiceNode(String id, Process process, Path log, int port) {
        this.id = id;
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** Starts node {@code id} against {@code natsUrl} with {@code extra} properties; returns once it is ready. */
    public static ServiceNode start(Path dir, String id, String natsUrl, String... extra) {
        try {
            int port = freePort();
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"), GoschedApplication.class.getName(),
                    "--server.port=" + port, "--server.address=127.0.0.1",
                    "--gosched.cluster.nats.url=" + natsUrl, "--gosched.cluster.node-id=" + id,
                    "--gosched.cluster.heartbeat=1s", "--gosched.cluster.forward-margin=1s",
                    "--gosched.cluster.connect-timeout=20s", "--spring.main.banner-mode=off"));
            cmd.addAll(1, io.gosched.runtime.SafeJvm.OPTIONS); // else the application re-executes itself with them: a second JVM start-up
            cmd.addAll(List.of(extra));
            Path log = dir.resolve(id + ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            ServiceNode node = new ServiceNode(id, p, log, port);
            node.awaitReady(Duration.ofSeconds(300)); // a shared, loaded machine: three JVMs start at once
            return node;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start node " + id, e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void awaitReady(Duration within) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("node " + id + " exited with " + process.exitValue() + ":\n" + logTail());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(baseUrl() + "/actuator/health/readiness"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().contains("UP")) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            sleep(250);
        }
        close();
        throw new IllegalStateException("node " + id + " not ready within " + within + ":\n" + logTail());
    }

    public String id() {
        return id;
    }

    public int port() {
        return port;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: no shutdown hook runs, nothing is unregistered, the heartbeat just stops. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** SIGTERM, without waiting: the node starts its graceful shutdown; {@link #awaitExit} waits for its end. */
    public void terminate() {
        process.destroy();
    }

    /** Waits up to {@code within} for the process to end; its exit code, or empty if it still runs. */
    public java.util.OptionalInt awaitExit(Duration within) {
        try {
            return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS) ? java.util.OptionalInt.of(process.exitValue())
                    : java.util.OptionalInt.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.OptionalInt.empty();
        }
    }

    /** SIGTERM and a graceful stop; SIGKILL if it does not end within 30 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
