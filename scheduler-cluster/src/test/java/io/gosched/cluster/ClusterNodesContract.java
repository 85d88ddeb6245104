package io.gosched.cluster;

import io.gosched.testing.Await;
import java.time.Duration;
import java.util.List;

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
