package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * The latency histogram's buckets (upper bounds inclusive, as Prometheus's le) and its sampling:
 * 1 in 8 transitions, 1 in 32 hand-offs counted 4 times.
 */
class LatencyBucketsTest {

    @Test
    void aWaitFallsInTheFirstBucketWhoseBoundIsAtLeastIt() {
        long[] b = LatencyBuckets.BOUNDS_NANOS;
        assertThat(LatencyBuckets.bucket(0)).isZero();
        for (int i = 0; i < b.length; i++) {
            assertThat(LatencyBuckets.bucket(b[i])).as("exactly %d ns", b[i]).isEqualTo(i);
            assertThat(LatencyBuckets.bucket(b[i] + 1)).as("just over %d ns", b[i]).isEqualTo(i + 1);
        }
        assertThat(LatencyBuckets.bucket(Long.MAX_VALUE)).as("the +Inf bucket").isEqualTo(b.length);
    }

    @Test
    void oneTransitionInEightIsTimed() {
        assertThat(timedOf(LatencyBuckets::trackedSince, 8 * 1000)).isEqualTo(1000);
        assertThat(LatencyBuckets.trackedSince(8)).isNotZero();
        assertThat(LatencyBuckets.trackedSince(7)).isZero();
    }

    @Test
    void oneHandOffInThirtyTwoIsTimedAndCountsForFour() {
        assertThat(timedOf(LatencyBuckets::handOffTrackedSince, 32 * 1000)).isEqualTo(1000);
        assertThat(LatencyBuckets.handOffTrackedSince(32)).isNotZero();
        assertThat(LatencyBuckets.handOffTrackedSince(8)).isZero();
        assertThat(LatencyBuckets.HAND_OFF_WEIGHT * LatencyBuckets.TRACKING_PERIOD)
                .isEqualTo(LatencyBuckets.HAND_OFF_TRACKING_PERIOD);
    }

    /**
     * A ping-pong pair on one P: 200,000 goroutine-to-goroutine hand-offs, timed 1 in 32 and
     * counted 4 times each, make the histogram count what Go's 1 in 8 would, 25,000 (one standard
     * deviation is about 310). Unweighted it counts 6,250; timed at 1 in 8 and weighted, 100,000.
     */
    @Test
    void aPingPongsHandOffsAreCountedAtGosRate() throws Exception {
        int roundTrips = 100_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            long before = rt.stats().schedLatency().count();
            rt.run(() -> {
                GoTesting.pingPong(roundTrips);
                return null;
            });
            long counted = rt.stats().schedLatency().count() - before;
            long expected = 2L * roundTrips / LatencyBuckets.TRACKING_PERIOD;
            assertThat(counted).as("latency samples counted for %d hand-offs", 2 * roundTrips)
                    .isBetween(expected * 9 / 10, expected * 11 / 10);
        }
    }

    /** How many of n transitions, with random numbers spread over the int range, sampling times. */
    private static int timedOf(IntToLongFunction trackedSince, int n) {
        int timed = 0;
        for (int rnd = 0; rnd < n; rnd++) {
            timed += trackedSince.applyAsLong(rnd * 0x9E3779B1) != 0 ? 1 : 0;
        }
        return timed;
    }
}
