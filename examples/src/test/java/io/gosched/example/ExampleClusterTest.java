package io.gosched.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpServer;
import io.gosched.cluster.testing.NatsServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example in cluster mode, as its README runs it: a real nats-server with JetStream, two
 * instances of the application (here two Spring contexts in this JVM, each with its own runtime,
 * port and node id) switched to cluster mode by {@code gosched.cluster.nats.url}. Jobs of both
 * handlers are submitted on one instance and read back from the other; each runs once, on one of
 * the two, as its first attempt.
 */
class ExampleClusterTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** Bounds and how many primes lie below each: what a correct sieve answers. */
    private static final Map<Integer, Integer> PRIMES_BELOW = Map.of(100, 25, 1_000, 168, 10_000, 1_229, 100_000, 9_592, 1_000_000, 78_498);

    @TempDir
    Path dir;

    private NatsServer nats;
    private HttpServer quotes;
    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();

    /** Calls the quote service got, by the Idempotency-Key (the job id) they carried. */
    private final Map<String, AtomicInteger> callsByJob = new ConcurrentHashMap<>();
    /** The HOLD quotes wait here for each other: both are answered only once both calls are in. */
    private final CountDownLatch holds = new CountDownLatch(2);

    @BeforeEach
    void start() throws IOException {
        nats = NatsServer.start(dir.resolve("nats")); // skips the test, saying why, where nats-server is not installed
        quotes = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        quotes.setExecutor(java.util.concurrent.Executors.newCachedThreadPool()); // two HOLD calls wait at once
        quotes.createContext("/quotes/", exchange -> {
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            callsByJob.computeIfAbsent(String.valueOf(key), k -> new AtomicInteger()).incrementAndGet();
            String symbol = exchange.getRequestURI().getPath().substring("/quotes/".length());
            boolean together = true;
            if (symbol.startsWith("HOLD")) {
                holds.countDown();
                try {
                    // under the handler's own 10 s request timeout
                    together = holds.await(8, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    together = false;
                }
            }
            byte[] body = ("{\"symbol\":\"" + symbol + "\",\"price\":42.5,\"together\":" + together + "}").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        quotes.start();
    }

    @AfterEach
    void stop() {
        for (ConfigurableApplicationContext app : apps) {
            try {
                app.close();
            } catch (RuntimeException e) {
                // the next one still has to go
            }
        }
        if (quotes != null) {
            quotes.stop(0);
            ((java.util.concurrent.ExecutorService) quotes.getExecutor()).shutdownNow();
        }
        if (nats != null) {
            nats.close();
        }
    }

    /** One instance of the example, started as the README starts it, plus a test's arguments. */
    private String instance(String nodeId) {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(ExampleApplication.class).run(
                "--server.port=0",
                "--gosched.cluster.nats.url=" + nats.url(),
                "--gosched.cluster.node-id=" + nodeId,
                "--example.quotes.url=http://127.0.0.1:" + quotes.getAddress().getPort() + "/quotes/",
                // one job at a time per instance: a busy instance leaves the next job to the other, so both run some
                "--gosched.api.admission.max-running-jobs=1",
                "--management.endpoints.web.exposure.include=health,prometheus",
                "--spring.main.banner-mode=off", "--logging.level.root=WARN");
        apps.add(app);
        return "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
    }

    @Test
    void jobsOfBothHandlersSubmittedOnOneInstanceRunOnceInTheClusterAndReadTheSameOnTheOther() throws Exception {
        String a = instance("node-a");
        String b = instance("node-b");

        // submitted on node-a, in this order: two quotes that are answered only together, so each instance
        // (one job at a time) must run one of them; then primes and more quotes
        Map<String, Integer> primes = new LinkedHashMap<>(); // job id -> the count expected
        Map<String, String> quoteJobs = new LinkedHashMap<>(); // job id -> symbol
        for (String symbol : List.of("HOLD1", "HOLD2")) {
            quoteJobs.put(submit(a, "{\"handler\": \"quote\", \"args\": {\"symbol\": \"" + symbol + "\"}}"), symbol);
        }
        for (int round = 0; round < 2; round++) {
            for (Map.Entry<Integer, Integer> e : PRIMES_BELOW.entrySet()) {
                primes.put(submit(a, "{\"handler\": \"primes\", \"args\": {\"below\": " + e.getKey() + "}}"), e.getValue());
            }
            for (String symbol : List.of("ACME", "GLOBEX", "INITECH")) {
                quoteJobs.put(submit(a, "{\"handler\": \"quote\", \"args\": {\"symbol\": \"" + symbol + round + "\"}}"), symbol + round);
            }
        }

        Map<String, Integer> ranOn = new HashMap<>(); // node -> primes jobs it ran
        for (Map.Entry<String, Integer> e : primes.entrySet()) {
            JsonNode j = finished(b, e.getKey());
            assertThat(j.path("state").asString()).as("%s", j).isEqualTo("succeeded");
            assertThat(j.path("attempt").asInt()).as("%s", j).isEqualTo(1);
            assertThat(j.path("node").asString()).as("%s", j).isIn("node-a", "node-b");
            assertThat(j.path("result").path("count").asInt()).as("%s", j).isEqualTo(e.getValue());
            assertThat(job(a, e.getKey()).path("result")).as("the same result on node-a").isEqualTo(j.path("result"));
            ranOn.merge(j.path("node").asString(), 1, Integer::sum);
        }
        List<String> holdNodes = new ArrayList<>();
        for (Map.Entry<String, String> e : quoteJobs.entrySet()) {
            JsonNode j = finished(b, e.getKey());
            assertThat(j.path("state").asString()).as("%s", j).isEqualTo("succeeded");
            assertThat(j.path("attempt").asInt()).as("%s", j).isEqualTo(1);
            assertThat(j.path("node").asString()).as("%s", j).isIn("node-a", "node-b");
            JsonNode price = j.path("result");
            assertThat(price.path("symbol").asString()).isEqualTo(e.getValue());
            assertThat(price.path("status").asInt()).isEqualTo(200);
            assertThat(price.path("attempt").asInt()).isEqualTo(1);
            assertThat(price.path("body").asString()).contains("42.5").contains("\"together\":true");
            assertThat(job(a, e.getKey()).path("result")).as("the same result on node-a").isEqualTo(price);
            if (e.getValue().startsWith("HOLD")) {
                holdNodes.add(j.path("node").asString());
            }
        }
        assertThat(holdNodes).as("the two quotes answered together ran one on each instance").containsExactlyInAnyOrder("node-a", "node-b");

        // exactly once: the quote service got one call per quote job, with the job's id as its Idempotency-Key ...
        assertThat(callsByJob.keySet()).containsExactlyInAnyOrderElementsOf(quoteJobs.keySet());
        assertThat(callsByJob.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        // ... and each primes job was one attempt, on the instance its view names, and nowhere else
        // (a node times an attempt right after writing its outcome: the last one may lag its view by a moment)
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (attemptsOf(a, "handler:primes") + attemptsOf(b, "handler:primes") < primes.size() && System.nanoTime() - end < 0) {
            Thread.sleep(50);
        }
        Map<String, Integer> attempts = Map.of("node-a", attemptsOf(a, "handler:primes"), "node-b", attemptsOf(b, "handler:primes"));
        assertThat(attempts).as("primes attempts per node, against the views' nodes %s", ranOn)
                .isEqualTo(Map.of("node-a", ranOn.getOrDefault("node-a", 0), "node-b", ranOn.getOrDefault("node-b", 0)));
        assertThat(attemptsOf(a, "handler:quote") + attemptsOf(b, "handler:quote")).isEqualTo(quoteJobs.size());
    }

    // ------------------------------------------------------------------ the HTTP API, as a client uses it

    private static String submit(String node, String body) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(node + "/api/v1/jobs")).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("POST %s: %s", body, r.body()).isEqualTo(202);
        return JSON.readTree(r.body()).path("id").asString();
    }

    private static JsonNode job(String node, String id) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(node + "/api/v1/jobs/" + id)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("GET job %s on %s: %s", id, node, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The job as {@code node} reads it once it has ended, or a failure saying where it stood. */
    private static JsonNode finished(String node, String id) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            JsonNode j = job(node, id);
            String state = j.path("state").asString();
            if (!state.equals("queued") && !state.equals("running")) {
                return j;
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("job " + id + " not ended within 90 s on " + node + ": " + j);
            }
            Thread.sleep(50);
        }
    }

    private static final Pattern ATTEMPTS = Pattern.compile(
            "^gosched_jobs_by_type_attempt_duration_seconds_count\\{[^}]*type=\"([^\"]+)\"[^}]*} ([0-9.eE+]+)$", Pattern.MULTILINE);

    /** Attempts of {@code type} that ran on {@code node}, from its Prometheus scrape (0 before its first). */
    private static int attemptsOf(String node, String type) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(node + "/actuator/prometheus")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("scrape of %s", node).isEqualTo(200);
        Matcher m = ATTEMPTS.matcher(r.body());
        int n = 0;
        while (m.find()) {
            if (m.group(1).equals(type)) {
                n += (int) Double.parseDouble(m.group(2));
            }
        }
        return n;
    }
}
