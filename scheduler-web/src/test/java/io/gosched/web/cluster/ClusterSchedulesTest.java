package io.gosched.web.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

/**
 * A schedule fired by a three-node cluster on a real nats-server, each node a JVM of its own: an
 * {@code every: PT1S} schedule runs while one node dies by SIGKILL (mid-fire, as likely as not)
 * and another is restarted. Over every tick from the schedule's creation to its pause, each
 * tick made exactly one job: none doubled by two nodes firing it, none lost to the death (the
 * nodes that live decide the ticks; a fire the dead node decided but did not admit is admitted by
 * another), and none lost to misfires, since some node always ran.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES) // three JVM start-ups and one restart on a loaded machine
class ClusterSchedulesTest extends OnOneNatsServer {

    static final String NAME = "every-second";

    @Test
    void everyTickMakesOneJobThroughAKillAndARestart() throws Exception {
        List<CompletableFuture<ClusterNode>> starting = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return ClusterNode.forked(dir, nats.url(), id);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<ClusterNode> f : starting) {
            f.handle((n, e) -> n == null ? null : nodes.add(n)).join(); // closed after the test, however it ends
        }
        for (CompletableFuture<ClusterNode> f : starting) {
            f.join(); // a node that did not start fails the test here
        }
        ClusterNode a = starting.get(0).join();
        ClusterNode b = starting.get(1).join();
        ClusterNode c = starting.get(2).join();

        JsonNode created = a.client.post().uri("/api/v1/schedules").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", NAME, "every", "PT1S", "overlap", "allow",
                        "job", Map.of("name", "tick-job", "workload", Map.of("steps", List.of(Map.of("op", "yield"))))))
                .exchange().expectStatus().isCreated().expectBody(JsonNode.class).returnResult().getResponseBody();
        Instant createdAt = Instant.parse(created.path("createdAt").asText());
        long start = System.nanoTime();

        Thread.sleep(8_000);
        b.kill(); // SIGKILL: whatever b was deciding or admitting stays half done
        Thread.sleep(4_000);
        c.close(); // a graceful stop, then the same node again
        nodes.remove(c);
        ClusterNode c2 = forked("c");
        // run on with the restarted node until at least 32 ticks passed and c2 took part for a while
        while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(32)) {
            Thread.sleep(500);
        }
        Thread.sleep(3_000);
        JsonNode paused = c2.client.post().uri("/api/v1/schedules/{n}/pause", NAME).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        assertThat(paused.path("paused").asBoolean()).isTrue();
        Thread.sleep(2_500); // a fire decided just before the pause is admitted (by its node, or another after 2 s)
        Instant last = Instant.parse(a.client.get().uri("/api/v1/schedules/{n}", NAME).exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody().path("lastFireAt").asText());

        Map<Instant, Integer> perTick = new TreeMap<>();
        JsonNode page = a.client.get().uri("/api/v1/jobs?name=tick-job&size=500").exchange().expectStatus().isOk()
                .expectBody(JsonNode.class).returnResult().getResponseBody();
        for (JsonNode j : page.path("items")) {
            assertThat(j.path("schedule").asText()).isEqualTo(NAME);
            perTick.merge(Instant.parse(j.path("scheduledFor").asText()), 1, Integer::sum);
        }
        List<Instant> expected = new ArrayList<>();
        for (Instant t = createdAt.plusSeconds(1); !t.isAfter(last); t = t.plusSeconds(1)) {
            expected.add(t);
        }
        assertThat(expected).as("ticks fired").hasSizeGreaterThanOrEqualTo(30);
        assertThat(perTick.entrySet()).as("ticks that made more than one job").filteredOn(e -> e.getValue() > 1).isEmpty();
        assertThat(perTick.keySet()).as("one job for every tick from creation to the last fire, nothing else")
                .containsExactlyElementsOf(expected);
        assertThat(page.path("total").asLong()).isEqualTo(expected.size());
    }
}
