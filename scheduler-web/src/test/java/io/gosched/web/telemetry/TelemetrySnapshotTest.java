package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.LatencyHistogram;
import org.junit.jupiter.api.Test;

class TelemetrySnapshotTest {

    @Test
    void flattensStatsWithDerivedRunningCounts() {
        TelemetrySnapshot s = TelemetrySnapshot.of(3, 1234, FakeStats.of(4, 100));

        assertThat(s.seq()).isEqualTo(3);
        assertThat(s.procs()).hasSize(4);
        assertThat(s.procs().get(0)).isEqualTo(new TelemetrySnapshot.Proc(0, "running", 1, 42, 7, 0, 100, 10, 0));
        assertThat(s.goroutines().running()).isEqualTo(1);   // only P0 has a current G
        assertThat(s.threads()).isEqualTo(new TelemetrySnapshot.Threads(8, 4, 1, 2, 1)); // 8 - 1 - 2 - 1
        assertThat(s.counters().steals()).isEqualTo(102);
        assertThat(s.counters().syscallHandoffs()).isEqualTo(109);
        assertThat(s.uptimeSeconds()).isEqualTo(5.0);
    }

    @Test
    void schedtraceLineHasGosFormat() {
        assertThat(TelemetrySnapshot.schedtrace(FakeStats.of(3, 0)))
                .isEqualTo("SCHED 5000ms: gomaxprocs=3 idleprocs=1 threads=8 spinningthreads=1 idlethreads=2 runqueue=9 [1 2 3]");
    }

    @Test
    void quantileIsTheUpperBoundOfTheBucketHoldingTheRankAndNeverInfinite() {
        double[] bounds = {0.001, 0.01, 0.1, Double.POSITIVE_INFINITY};
        LatencyHistogram h = new LatencyHistogram(bounds, new long[] {50, 40, 9, 1}, 100, 1);
        assertThat(TelemetrySnapshot.quantile(h, 0.50)).isEqualTo(0.001);
        assertThat(TelemetrySnapshot.quantile(h, 0.90)).isEqualTo(0.01);
        assertThat(TelemetrySnapshot.quantile(h, 0.99)).isEqualTo(0.1);
        assertThat(TelemetrySnapshot.quantile(h, 1.0)).isEqualTo(0.1); // +Inf bucket: last finite bound
        assertThat(TelemetrySnapshot.quantile(new LatencyHistogram(bounds, new long[4], 0, 0), 0.99)).isZero();
    }
}
