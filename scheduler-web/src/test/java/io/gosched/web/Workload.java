package io.gosched.web;

import java.time.Duration;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Drives the running service through scheduler-api so every job and channel meter exists. */
public final class Workload {

    private Workload() {}

    /** Submits one small fan-out job and one channel send; returns once a job has finished. */
    public static void runJobAndChannelOps(WebTestClient client, String channel) {
        client.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("template", "fan-out-fan-in",
                        "params", Map.of("workers", 8, "itemsPerWorker", 40, "computeUs", 200)))
                .exchange().expectStatus().isAccepted();
        client.post().uri("/api/v1/channels").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", channel, "capacity", 4))
                .exchange().expectStatus().is2xxSuccessful();
        client.post().uri("/api/v1/channels/{name}/send", channel).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("value", 1, "timeoutMs", 1000))
                .exchange().expectStatus().is2xxSuccessful();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!scrape(client).contains("gosched_jobs_finished_total{")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no job finished within 60 s:\n" + scrape(client));
            }
            sleep(200);
        }
    }

    public static String scrape(WebTestClient client) {
        return client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
