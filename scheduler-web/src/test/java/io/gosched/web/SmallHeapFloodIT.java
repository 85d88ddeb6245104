package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.web.deploy.Dashboard;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 17 as a user met it, against the real service jar in its own JVM with a 256 MiB heap and
 * {@code -XX:+ExitOnOutOfMemoryError} (an OutOfMemoryError ends the process, so it cannot hide in
 * a log while the test talks to a half-dead service): named channels and jobs flooded over HTTP
 * until refused. The service must answer 429 problems naming the budget, stay healthy, and give
 * back every value it accepted.
 *
 * <p>Runs in failsafe's integration-test phase, after {@code package} built the jar ({@code
 * gosched.jar}). The second test drives {@code deploy/loadtest/MemoryFlood.java}, the same flood
 * the load-test results under {@code bench/results/} come from.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// A separate JVM that must come up and then be flooded for up to 3 minutes: more than the 5-minute default allows for.
@Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
class SmallHeapFloodIT {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    static final String PAD = "p".repeat(60_000);

    static Process service;
    static Path log;
    static String base;

    @BeforeAll
    static void startTheServiceOnASmallHeap() throws Exception {
        String jar = System.getProperty("gosched.jar");
        assertThat(jar).as("failsafe passes gosched.jar, the jar package built").isNotNull();
        assertThat(Path.of(jar)).as("the service jar").exists();
        Path dir = Path.of(System.getProperty("gosched.it.dir", "target/small-heap-flood"));
        Files.createDirectories(dir);
        log = dir.resolve("service.log");
        int port = freePort();
        base = "http://127.0.0.1:" + port;
        service = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // The options given here, so the jar does not re-execute itself with them (a second JVM start-up).
                io.gosched.runtime.SafeJvm.OPTIONS.get(0), io.gosched.runtime.SafeJvm.OPTIONS.get(1),
                "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-Xlog:gc:file=" + dir.resolve("gc.log"),
                "-jar", jar, "--server.port=" + port, "--server.address=127.0.0.1",
                "--spring.lifecycle.timeout-per-shutdown-phase=5s", "--gosched.runtime.shutdown-timeout=5s")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        while (true) {
            assertThat(service.isAlive()).as("the service exited at start-up:%n%s", tail()).isTrue();
            if (status("/actuator/health") == 200) {
                return;
            }
            assertThat(System.nanoTime() < deadline).as("the service did not start in 180 s:%n%s", tail()).isTrue();
            Thread.sleep(500);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (service != null) {
            service.destroy();
            if (!service.waitFor(30, TimeUnit.SECONDS)) {
                service.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Order(1)
    void floodedChannelsAndJobsAreRefusedWith429ProblemsAndEveryAcceptedValueComesBack() throws Exception {
        JsonNode limits = get("/api/v1/limits");
        long budget = limits.at("/memory/maxBytes").asLong();
        long share = limits.at("/memory/maxChannelBytes").asLong();
        assertThat(budget).as("half of a 256 MiB heap, as Runtime.maxMemory() reports it").isBetween(100L << 20, 135L << 20);
        assertThat(share).isEqualTo(budget / 8);

        // One channel until its share refuses: the problem names the share and who holds it.
        Map<String, Set<String>> accepted = new java.util.LinkedHashMap<>();
        HttpResponse<String> refusal = fill("it-0", accepted);
        JsonNode p = JSON.readTree(refusal.body());
        assertThat(refusal.statusCode()).isEqualTo(429);
        assertThat(refusal.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(refusal.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(p.get("type").asString()).isEqualTo("urn:gosched:problem:memory-budget");
        assertThat(p.get("budget").asString()).isEqualTo("gosched.api.limits.max-channel-bytes");
        assertThat(p.get("budgetBytes").asLong()).isEqualTo(share);
        assertThat(p.get("heldBy").get("channel 'it-0'").asLong()).isGreaterThan(share - 70_000);
        assertThat(p.get("detail").asString()).contains("channel 'it-0'", Long.toString(share));

        // More channels until the whole budget refuses: named, sized, and who holds it.
        JsonNode whole = null;
        for (int c = 1; c < 16 && whole == null; c++) {
            JsonNode q = JSON.readTree(fill("it-" + c, accepted).body());
            if (q.get("budget").asString().equals("gosched.api.limits.max-retained-bytes")) {
                whole = q;
            }
        }
        assertThat(whole).as("the whole budget refused a send").isNotNull();
        assertThat(whole.get("budgetBytes").asLong()).isEqualTo(budget);
        assertThat(whole.get("usedBytes").asLong()).isGreaterThan(budget - 200_000);
        assertThat(whole.get("heldBy").get("channels").asLong()).as("channels hold it").isGreaterThan(budget * 9 / 10);
        assertThat(whole.get("retryAfterSeconds").asInt()).isEqualTo(1);
        long values = accepted.values().stream().mapToLong(Set::size).sum();
        assertThat(values * 60_000).as("bytes of JSON accepted").isGreaterThan(budget * 9 / 10);

        // A job now is refused by the same budget, before any of it is kept.
        HttpResponse<String> job = post("/api/v1/jobs", "{\"workload\":{\"steps\":[{\"op\":\"send\",\"channel\":\"it-0\",\"value\":\""
                + PAD + "\"}]}}");
        assertThat(job.statusCode()).as(job.body()).isEqualTo(429);
        assertThat(JSON.readTree(job.body()).get("kind").asString()).isEqualTo("queued_jobs");
        assertThat(job.headers().firstValue("Retry-After")).isPresent();

        // The service held, and every value it accepted is still there.
        assertAlive();
        assertThat(status("/actuator/health")).isEqualTo(200);
        for (var e : accepted.entrySet()) {
            Set<String> got = new HashSet<>();
            while (true) {
                JsonNode r = JSON.readTree(post("/api/v1/channels/" + e.getKey() + "/recv", "{\"timeoutMs\":0}").body());
                if (!r.get("received").asBoolean()) {
                    break;
                }
                String v = r.get("value").asString();
                got.add(v.substring(0, v.indexOf('|')));
            }
            assertThat(got).as("values received from %s", e.getKey()).isEqualTo(e.getValue());
        }
        JsonNode after = get("/api/v1/limits");
        assertThat(after.at("/memory/heldBy/pending_sends").asLong()).isZero();
        assertThat(after.at("/memory/heldBy/channels").asLong()).as("only the channels' slot arrays are left")
                .isLessThan(accepted.size() * 500_000L);
        for (String ch : accepted.keySet()) {
            assertThat(request("DELETE", "/api/v1/channels/" + ch, null).statusCode()).isEqualTo(204);
        }
        assertThat(get("/api/v1/limits").at("/memory/heldBy/channels").asLong()).isZero();
        assertAlive();
    }

    @Test
    @Order(2)
    void theLoadTestFloodOfChannelsAndJobsTogetherLosesNothing() throws Exception {
        Path flood = Dashboard.repoRoot().resolve("deploy/loadtest/MemoryFlood.java");
        Path out = log.resolveSibling("memory-flood.txt");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), flood.toString(), base)
                .redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().putAll(Map.of("THREADS", "16", "SPAWNERS", "2", "FINISHED", "100"));
        Process p = pb.start();
        assertThat(p.waitFor(8, TimeUnit.MINUTES)).as("the flood finished").isTrue();
        String report = Files.readString(out);
        assertThat(p.exitValue()).as("the flood's checks:%n%s%nservice:%n%s", report, tail()).isZero();
        Matcher m = Pattern.compile("RESULT name=memory-flood (.*)").matcher(report);
        assertThat(m.find()).as(report).isTrue();
        Map<String, String> result = new java.util.HashMap<>();
        for (String kv : m.group(1).trim().split(" ")) {
            result.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        assertThat(Long.parseLong(result.get("values_accepted"))).isPositive();
        assertThat(Long.parseLong(result.get("values_refused"))).as("values refused").isPositive();
        assertThat(Long.parseLong(result.get("jobs_refused"))).as("jobs refused").isPositive();
        assertThat(result).containsEntry("values_lost", "0").containsEntry("jobs_missing", "0").containsEntry("unexpected", "0")
                .containsEntry("health", "UP");
        assertThat(Double.parseDouble(result.get("evicted_under_pressure"))).as("finished jobs evicted under pressure").isPositive();
        assertAlive();
        assertThat(status("/actuator/health")).isEqualTo(200);
    }

    /** Sends 60 KB values to a new channel until it is refused; returns the refusal. */
    static HttpResponse<String> fill(String channel, Map<String, Set<String>> accepted) throws Exception {
        HttpResponse<String> created = post("/api/v1/channels", "{\"name\":\"" + channel + "\",\"capacity\":100000}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        Set<String> ids = new HashSet<>();
        accepted.put(channel, ids);
        for (int i = 0; i < 100_000; i++) {
            String id = channel + "#" + i;
            HttpResponse<String> r = post("/api/v1/channels/" + channel + "/send", "{\"value\":\"" + id + "|" + PAD + "\",\"timeoutMs\":1000}");
            if (r.statusCode() == 429) {
                return r;
            }
            assertThat(r.statusCode()).as("send %s: %s", id, r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("sent").asBoolean()).isTrue();
            ids.add(id);
        }
        throw new AssertionError(channel + " took 100,000 values of 60 KB: the budget never refused");
    }

    static void assertAlive() throws IOException {
        assertThat(service.isAlive()).as("the service died:%n%s", tail()).isTrue();
        String out = Files.readString(log);
        assertThat(out).as("the service's output").doesNotContain("OutOfMemoryError").doesNotContain("Terminating due to java.lang.OutOfMemoryError");
    }

    static String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", new ArrayList<>(lines.subList(Math.max(0, lines.size() - 60), lines.size())));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    static JsonNode get(String path) throws Exception {
        HttpResponse<String> r = request("GET", path, null);
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    static int status(String path) {
        try {
            return request("GET", path, null).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    static HttpResponse<String> post(String path, String json) throws Exception {
        return request("POST", path, json);
    }

    static HttpResponse<String> request(String method, String path, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        try {
            return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.net.http.HttpTimeoutException e) {
            throw new AssertionError(method + " " + path + " got no answer in 30 s; the service's threads then: " + threadDump(), e);
        }
    }

    /**
     * The service's threads (jcmd Thread.print) written next to its log, and the stacks of those
     * that are not idle, for the failure message: a hang found by CI must say where it hangs.
     */
    static String threadDump() {
        try {
            Path out = log.resolveSibling("threads-" + System.currentTimeMillis() + ".txt");
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(service.pid()), "Thread.print").redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "(jcmd did not answer in 60 s)";
            }
            StringBuilder busy = new StringBuilder(out + ":\n");
            for (String thread : Files.readString(out).split("\n\n")) {
                boolean idle = thread.contains("sun.nio.ch.EPoll.wait") || thread.contains("LockSupport.park")
                        || thread.contains("Object.wait") || !thread.contains("java.lang.Thread.State");
                if (!idle || thread.contains("reactor-http") || thread.contains("gosched-m-")) {
                    busy.append(thread, 0, Math.min(thread.length(), 3_000)).append("\n\n");
                }
            }
            return busy.length() > 60_000 ? busy.substring(0, 60_000) : busy.toString();
        } catch (Exception e) {
            return "(no thread dump: " + e + ")";
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
