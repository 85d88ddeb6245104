package io.gosched.web.cluster;

import io.gosched.GoschedApplication;
import io.gosched.web.MeterTraffic;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

/**
 * One gosched node of a test cluster: the application started as a user starts it, in this JVM
 * (a Spring context of its own) or forked into a JVM of its own, which {@link #kill()} ends with
 * a real SIGKILL.
 */
final class ClusterNode implements AutoCloseable {

    final String id;
    private final ConfigurableApplicationContext app;
    private final Process process;
    private final Path log;
    private final int port;
    final WebTestClient client;

    private ClusterNode(String id, ConfigurableApplicationContext app, Process process, Path log, int port) {
        this.id = id;
        this.app = app;
        this.process = process;
        this.log = log;
        this.port = port;
        this.client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(30)).build();
    }

    static List<String> args(String natsUrl, String id, int port, String... extra) {
        List<String> a = new ArrayList<>(List.of("--server.port=" + port, "--gosched.cluster.nats.url=" + natsUrl,
                "--gosched.cluster.node-id=" + id, "--gosched.cluster.ack-wait=3s", "--gosched.cluster.heartbeat=500ms",
                "--gosched.cluster.connect-timeout=20s", "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
        a.addAll(List.of(extra));
        return a;
    }

    /** A node in this JVM. */
    static ClusterNode inJvm(String natsUrl, String id, String... extra) {
        return inJvm(natsUrl, id, Map.of(), extra);
    }

    /**
     * A node in this JVM with {@code beans} registered before its context starts (by bean name), as an
     * application adds its own. They are primary: a test's bean replaces the one of the same type the
     * auto-configuration makes (the starter's {@code JobHandlers} registry, for a test's own handlers).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static ClusterNode inJvm(String natsUrl, String id, Map<String, Object> beans, String... extra) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(GoschedApplication.class)
                .initializers(ctx -> beans.forEach((name, bean) -> ((org.springframework.context.support.GenericApplicationContext) ctx)
                        .registerBean(name, (Class) bean.getClass(), () -> bean, bd -> bd.setPrimary(true))))
                .run(args(natsUrl, id, 0, extra).toArray(String[]::new));
        int port = app.getEnvironment().getProperty("local.server.port", Integer.class);
        return new ClusterNode(id, app, null, null, port);
    }

    /** A node in a JVM of its own, started with this JVM's class path and module flags. */
    static ClusterNode forked(Path dir, String natsUrl, String id, String... extra) throws IOException, InterruptedException {
        int port = freePort();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.addAll(io.gosched.runtime.SafeJvm.OPTIONS); // else the application re-executes itself with them: a second JVM start-up
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("--enable-")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(GoschedApplication.class.getName());
        cmd.addAll(args(natsUrl, id, port, extra));
        Path log = dir.resolve(id + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ClusterNode n = new ClusterNode(id, null, p, log, port);
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            if (!p.isAlive()) {
                throw new AssertionError("node " + id + " exited with " + p.exitValue() + ":\n" + Files.readString(log));
            }
            try {
                n.client.get().uri("/actuator/health").exchange().expectStatus().isOk();
                return n;
            } catch (Throwable notYet) {
                if (System.nanoTime() - end > 0) {
                    p.destroyForcibly();
                    throw new AssertionError("node " + id + " did not start in 120 s:\n" + Files.readString(log));
                }
                Thread.sleep(250);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    int port() {
        return port;
    }

    <T> T bean(Class<T> type) {
        return app.getBean(type);
    }

    /** SIGKILL of a forked node: no shutdown hook, no goodbye to NATS. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    String logTail() {
        try {
            String s = log == null ? "" : Files.readString(log);
            return s.length() > 8000 ? s.substring(s.length() - 8000) : s;
        } catch (IOException e) {
            return e.toString();
        }
    }

    // ---------------------------------------------------------------- the API, as a client uses it

    static Map<String, Object> sleepJob(long ms) {
        return Map.of("workload", Map.of("steps", List.of(Map.of("op", "sleep", "ms", ms))), "timeoutMs", 120_000);
    }

    String submit(Map<String, Object> body) {
        JsonNode j = client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isAccepted().expectBody(JsonNode.class).returnResult().getResponseBody();
        return j.path("id").asText();
    }

    JsonNode job(String id) {
        return client.get().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isOk().expectBody(JsonNode.class).returnResult()
                .getResponseBody();
    }

    /** Polls until the job is in {@code state} (as this node reads it), or fails naming where it stood. */
    JsonNode await(String id, String state, Duration within) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        JsonNode j;
        while (!(j = job(id)).path("state").asText().equals(state)) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("job " + id + " not " + state + " within " + within + " on " + this.id + ": " + j);
            }
            Thread.sleep(50);
        }
        return j;
    }

    String scrape() {
        return MeterTraffic.scrape(client);
    }

    @Override
    public void close() {
        if (app != null) {
            app.close();
        }
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
