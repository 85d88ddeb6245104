package io.gosched.web;

import java.time.Duration;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Drives the running service through scheduler-api so every job and channel meter exists. */
public final class MeterTraffic {

    private MeterTraffic() {}

    /**
     * Submits one small fan-out job and one channel send; returns once the job has finished. Its
     * state is read through the API, not from this node's meters: in cluster mode another node
     * may run it (and count it).
     */
    /**
     * Submits the job, waiting out a 429 as a client should (its Retry-After): after a load test
     * the queue may still hold what the flood left, and the service rightly refuses more until it
     * drained. Anything else than 202 or 429 fails.
     */
    private static Map<?, ?> submitWhenThereIsRoom(WebTestClient client) {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            var r = client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("template", "fan-out-fan-in",
                            "params", Map.of("workers", 8, "itemsPerWorker", 40, "computeUs", 200)))
                    .exchange().returnResult(Map.class);
            int status = r.getStatus().value();
            if (status == 202) {
                return r.getResponseBody().blockFirst(Duration.ofSeconds(10));
            }
            if (status != 429 || System.nanoTime() > deadline) {
                throw new AssertionError("submission answered " + status + ": " + r.getResponseBody().blockFirst(Duration.ofSeconds(10)));
            }
            String after = r.getResponseHeaders().getFirst("Retry-After");
            try {
                Thread.sleep(Duration.ofSeconds(after == null ? 1 : Math.max(1, Long.parseLong(after.strip()))));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for room", e);
            } catch (NumberFormatException e) {
                throw new AssertionError("a 429 without a number of seconds in Retry-After: " + after, e);
            }
        }
    }

    public static void runJobAndChannelOps(WebTestClient client, String channel) {
        Map<?, ?> submitted = submitWhenThereIsRoom(client);
        String id = String.valueOf(submitted.get("id"));
        client.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", channel, "capacity", 4))
                .exchange().expectStatus().is2xxSuccessful();
        client.post().uri("/api/v1/channels/{name}/send", channel).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("value", 1, "timeoutMs", 1000))
                .exchange().expectStatus().is2xxSuccessful();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            Map<?, ?> job = client.get().uri("/api/v1/jobs/{id}", id).exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            Object state = job.get("state");
            if (!"queued".equals(state) && !"running".equals(state)) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("job " + id + " not finished within 60 s: " + job + "\n" + scrape(client));
            }
            sleep(200);
        }
    }

    /**
     * The whole exposition, however long. A scrape grows by about 18 KiB with each (method, URI,
     * status) a request was timed under (http.server.requests keeps a percentile histogram of 69
     * buckets for the dashboard's p99), so a context shared by many test classes passes the
     * client's default 256 KiB buffer; Prometheus itself sets no limit.
     */
    public static String scrape(WebTestClient client) {
        return client.mutate().codecs(c -> c.defaultCodecs().maxInMemorySize(SCRAPE_LIMIT)).build()
                .get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    /** Far above any scrape the tests make; a runaway metric still fails instead of filling the heap. */
    static final int SCRAPE_LIMIT = 16 * 1024 * 1024;

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
