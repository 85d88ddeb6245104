package io.gosched.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The plausibility rules that keep a broken timer from looking punctual. */
class MeasuresTest {
    private static final long MS = 1_000_000;

    @Test
    void hogOnTimeTickerIsPlausibleWithZeroLateness() {
        long[] gaps = new long[100];
        Arrays.fill(gaps, MS);
        Result r = Measures.hog(100, gaps, 100, 1, 1);
        assertThat(r.check()).isEqualTo(1);
        assertThat(r.metrics().get("max_ms")).isEqualTo(0.0);
    }

    @Test
    void hogTickerFiringFasterThanItsPeriodFailsTheCheck() {
        long[] gaps = new long[1000];
        Arrays.fill(gaps, MS / 10);
        gaps[999] = 100 * MS;   // covers the run, but 1000 ticks in ~200 ms is impossible at 1 ms
        assertThat(Measures.hog(100, gaps, 1000, 1, 1).check()).isZero();
    }

    @Test
    void hogTickerThatStoppedBeforeTheEndFailsTheCheck() {
        long[] gaps = new long[10];
        Arrays.fill(gaps, MS);
        assertThat(Measures.hog(100, gaps, 10, 1, 1).check()).isZero();
    }

    @Test
    void hogStarvedTickerShowsTheStarvation() {
        long[] gaps = {2000 * MS};
        Result r = Measures.hog(2000, gaps, 1, 5, 5);
        assertThat(r.check()).isEqualTo(1);
        assertThat(r.metrics().get("p99_ms")).isEqualTo(1999.0);
    }

    @Test
    void earlySleepsAreNotCounted() {
        assertThat(Measures.timers(300, MS, 0, 0, 3).check()).isEqualTo(297);
    }

    @Test
    void sleepDurationsStayWithinOneToFiftyMillis() {
        for (long i = 0; i < 10_000; i++) {
            for (long j = 0; j < 3; j++) assertThat(BenchWorkload.sleepMillis(i, j)).isBetween(1L, 50L);
        }
        // Pinned values: bench/go/main.go's sleepMillis must produce the same.
        assertThat(new long[] {BenchWorkload.sleepMillis(0, 0), BenchWorkload.sleepMillis(1, 2), BenchWorkload.sleepMillis(99_999, 2)})
                .containsExactly(sleepMillisGoValue(0, 0), sleepMillisGoValue(1, 2), sleepMillisGoValue(99_999, 2));
    }

    /** Go's formula with unsigned 64-bit arithmetic, spelled out independently of BenchWorkload's. */
    private static long sleepMillisGoValue(long i, long j) {
        java.math.BigInteger m64 = java.math.BigInteger.ONE.shiftLeft(64);
        java.math.BigInteger h = java.math.BigInteger.valueOf(i * 3 + j + 1)
                .multiply(new java.math.BigInteger("9E3779B97F4A7C15", 16)).mod(m64);
        h = h.xor(h.shiftRight(32));
        return 1 + h.mod(java.math.BigInteger.valueOf(50)).longValue();
    }

    @Test
    void expectedValuesMatchTheirDefinitions() {
        assertThat(BenchWorkload.FORKJOIN.expected(25, 0)).isEqualTo(75_025);
        assertThat(BenchWorkload.PINGPONG.expected(3, 0)).isEqualTo(1 + 2 + 3);
        assertThat(BenchWorkload.PRODCONS.expected(10, 128)).isEqualTo(BenchWorkload.messages(10) * (BenchWorkload.messages(10) - 1) / 2);
        assertThat(BenchWorkload.CHAIN.expected(10_000, 100)).isEqualTo(1_000_000);
    }
}
