package io.gosched.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.bench.peer.PeerMain;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every workload on every JVM peer at a tiny size, checked the way the comparison driver checks
 * it. Not a benchmark: it proves each harness program computes what it claims before anyone
 * trusts its timing (the Go peer is checked by the driver on every run).
 */
class WorkloadSmokeTest {
    private static final Map<String, Peer> PEERS = new HashMap<>();

    static Stream<Arguments> cases() {
        return Stream.of("gosched", "vt", "kotlin")
                .flatMap(p -> Stream.of(BenchWorkload.values()).map(w -> Arguments.of(p, w)));
    }

    private static long[] tinySize(BenchWorkload w) {
        return switch (w) {
            case SPAWN, PINGPONG, PINGPONG1, PRODCONS0, SELECT, GOSCHED -> new long[] {2_000, 0};
            case PRODCONS -> new long[] {8_000, 128};
            case CHAIN, CHAIN1 -> new long[] {100, 5};
            case FORKJOIN -> new long[] {15, 0};
            case TIMERS -> new long[] {200, 2};
            case HOG -> new long[] {200, 0};
            case PARKED -> new long[] {2_000, 0};   // no warm-up: its JIT waits take seconds
            case WAKEUP -> new long[] {50, 0};
        };
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("cases")
    void workloadComputesItsExpectedResult(String peer, BenchWorkload w) throws Exception {
        Peer impl = PEERS.computeIfAbsent(peer + "/" + w.procs(), k -> PeerMain.create(peer, w.procs()));
        long[] size = tinySize(w);
        Result r = impl.run(w, size[0], size[1]);
        assertThat(r.check()).as("%s on %s: %s", w.id(), peer, r.metrics()).isEqualTo(w.expected(size[0], size[1]));
        for (String metric : w.metrics()) {
            // RSS in a shared test JVM (its heap not fixed, so G1 may uncommit) can go either way.
            if (metric.equals("rss_b")) continue;
            assertThat(r.metrics().get(metric)).as("%s %s on %s", w.id(), metric, peer).isNotNull().isNotNaN()
                    .isGreaterThanOrEqualTo(0.0);
        }
        Result back = Result.parse(r.toLine());
        assertThat(back).isEqualTo(r);
    }

    @AfterAll
    static void closePeers() {
        PEERS.values().forEach(Peer::close);
        PEERS.clear();
    }
}
