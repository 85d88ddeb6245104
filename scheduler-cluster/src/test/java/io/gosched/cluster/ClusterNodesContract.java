package io.gosched.cluster;

import io.gosched.testing.Await;
import io.nats.client.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

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

    /**
     * Handler routing reads which nodes have which handlers from their entries: a node's own
     * names (also ones its application registers after the start), none for an entry written by
     * a node from before handlers were advertised, and nothing of a node that left.
     */
    @Test
    void eachNodeAdvertisesItsHandlersAndAnEntryWithoutThemHasNone() throws Exception {
        AtomicReference<Set<String>> own = new AtomicReference<>(Set.of("resize-image"));
        ClusterNodes a = nodes.track(ClusterNodes.start(nodes.connect("a"), own::get));
        ClusterNodes b = start("b");
        KeyValue kv = nodes.connect("old").keyValue(ClusterLayout.NODES_BUCKET);
        kv.put("old", "{\"node\":\"old\",\"incarnation\":\"old-1\",\"startedAt\":\"2026-01-01T00:00:00Z\"}"
                .getBytes(StandardCharsets.UTF_8));
        assertThat(b.list()).extracting(ClusterNodes.NodeInfo::node, ClusterNodes.NodeInfo::handlers).containsExactlyInAnyOrder(
                tuple("a", List.of("resize-image")), tuple("b", List.of()), tuple("old", List.of()));
        assertThat(b.hasHandler("resize-image")).isTrue();
        assertThat(a.hasHandler("resize-image")).as("a node's own count").isTrue();
        assertThat(b.hasHandler("send-mail")).isFalse();

        own.set(Set.of("send-mail", "resize-image"));
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> b.hasHandler("send-mail")))
                .as("a handler registered late is advertised at the next heartbeat").isTrue();
        assertThat(b.list()).filteredOn(n -> n.node().equals("a")).singleElement()
                .extracting(ClusterNodes.NodeInfo::handlers).isEqualTo(List.of("resize-image", "send-mail"));

        a.close();
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> !b.hasHandler("resize-image") && !b.hasHandler("send-mail")))
                .as("the handlers of a node that left are gone with it").isTrue();
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
