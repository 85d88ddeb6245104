package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A service (or Prometheus) of a compose stack, reached through its published port as a user
 * reaches it: plain HTTP from the host.
 */
record StackNode(String name, String baseUrl) {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final Set<String> FINAL = Set.of("succeeded", "failed", "cancelled", "timed_out");

    /** A job of one sleep step, long enough to be caught running. */
    static String sleepJob(long ms) {
        return "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":" + ms + "}]},\"timeoutMs\":120000}";
    }

    static final String YIELD_JOB = "{\"workload\":{\"steps\":[{\"op\":\"yield\"}]},\"timeoutMs\":30000}";

    WebTestClient client() {
        return WebTestClient.bindToServer().baseUrl(baseUrl).responseTimeout(Duration.ofSeconds(30)).build();
    }

    /** POST /api/v1/jobs, waiting out 429s (admission under load) as their Retry-After says; the job's id. */
    String submit(String body) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/v1/jobs"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
            if (r.statusCode() == 429 && System.nanoTime() < deadline) {
                long seconds = r.headers().firstValueAsLong("Retry-After").orElseThrow(
                        () -> new AssertionError("429 without Retry-After from " + name + ": " + r.body()));
                Thread.sleep(Math.max(100, seconds * 1000));
                continue;
            }
            assertThat(r.statusCode()).as("job submitted through %s: %s", name, r.body()).isEqualTo(202);
            return JSON.readTree(r.body()).path("id").asString();
        }
    }

    JsonNode job(String id) throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(baseUrl + "/api/v1/jobs/" + id)).GET());
        assertThat(r.statusCode()).as("job %s read from %s: %s", id, name, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The job once it reached a final state, read from this node. */
    JsonNode awaitFinal(String id, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        JsonNode j = job(id);
        while (!FINAL.contains(j.path("state").asString())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("job " + id + " not finished within " + within + ", read from " + name + ": " + j);
            }
            Thread.sleep(200);
            j = job(id);
        }
        return j;
    }

    /** A PromQL query through Prometheus's HTTP API (this node being Prometheus). */
    JsonNode query(String promql) throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(
                URI.create(baseUrl + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8))).GET());
        return JSON.readTree(r.body());
    }

    /** The single value of a PromQL query, or NaN when it has none. */
    double value(String promql) throws Exception {
        JsonNode result = query(promql).path("data").path("result");
        return result.isEmpty() ? Double.NaN : Double.parseDouble(result.get(0).path("value").get(1).asString());
    }

    JsonNode get(String path) throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET());
        assertThat(r.statusCode()).as("GET %s%s: %s", baseUrl, path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return HTTP.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
