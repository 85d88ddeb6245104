package io.gosched.cluster;

import io.gosched.testing.Await;
import io.nats.client.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Heartbeats and the leader against a real NATS server: a stopped node is gone within its TTL, and leadership moves on. */
abstract class ClusterNodesContract extends NatsTestBase {

    ClusterNodes start(String id) {
        return nodes.track(ClusterNodes.start(nodes.connect(id)));
    }

    @Test
    void exactlyOneNodeLeadsAndAnotherTakesOverWhenItDies() {
        ClusterNodes a = start("a");
        ClusterNodes b = start("b");
        ClusterNodes c = start("c");
        List<ClusterNodes> all = List.of(a, b, c);
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> all.stream().filter(ClusterNodes::isLeader).count() == 1)).isTrue();
        ClusterNodes leader = all.stream().filter(ClusterNodes::isLeader).findFirst().orElseThrow();
        assertThat(a.list()).extracting(ClusterNodes.NodeInfo::node).containsExactlyInAnyOrder("a", "b", "c");
        leader.abandon(); // SIGKILL: no goodbye, the entries expire
        List<ClusterNodes> rest = all.stream().filter(n -> n != leader).toList();
        assertThat(Await.holdsWithin(Duration.ofSeconds(15), () -> rest.stream().filter(ClusterNodes::isLeader).count() == 1))
                .as("a survivor leads within a few node TTLs").isTrue();
        assertThat(Await.holdsWithin(Duration.ofSeconds(15), () -> !rest.getFirst().isAlive(leader.self().node(), leader.self().incarnation())))
                .as("the dead node counts as gone").isTrue();
    }

    /**
     * The bucket's key listing races the heartbeats that rewrite its entries: a key rewritten
     * while the listing reads came back twice, and a node was listed twice. Here an entry is
     * rewritten without pause while the list is read.
     */
    @Test
    void theListNamesEachNodeOnceWhileItsEntriesAreRewritten() throws Exception {
        ClusterNodes a = start("a");
        KeyValue kv = nodes.connect("w").keyValue(ClusterLayout.NODES_BUCKET);
        byte[] entry = "{\"node\":\"w\",\"incarnation\":\"w-1\",\"startedAt\":\"2026-01-01T00:00:00Z\"}"
                .getBytes(StandardCharsets.UTF_8);
        kv.put("w", entry);
        AtomicBoolean stop = new AtomicBoolean();
        Thread rewriter = Thread.ofPlatform().name("rewriter").start(() -> {
            while (!stop.get()) {
                try {
                    kv.put("w", entry); // as a heartbeat does, without the pause
                } catch (Exception e) {
                    return; // the connection closed
                }
            }
        });
        try {
            for (int i = 0; i < 300; i++) {
                assertThat(a.list()).extracting(ClusterNodes.NodeInfo::node).as("listing %d", i)
                        .containsExactlyInAnyOrder("a", "w");
            }
        } finally {
            stop.set(true);
            rewriter.join();
        }
    }

    @Test
    void aNodeThatStopsCleanlyIsGoneAtOnceAndItsIdCanBeReused() {
        ClusterNodes a = start("a");
        ClusterNodes b = start("b");
        String incarnation = a.self().incarnation();
        a.close();
        assertThat(b.isAlive("a", incarnation)).isFalse();
        ClusterNodes again = start("a");
        assertThat(b.isAlive("a", again.self().incarnation())).isTrue();
    }

    @Test
    void aNodeRestartedAfterACrashWaitsForItsOldEntryToExpireThenStarts() {
        ClusterNodes a = start("a");
        a.abandon();
        long t0 = System.nanoTime();
        ClusterNodes again = start("a");
        assertThat(again.self().incarnation()).isNotEqualTo(a.self().incarnation());
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(15));
    }
}
