package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The latency histogram's buckets (upper bounds inclusive, as Prometheus's le) and its 1-in-32 sampling. */
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
    void oneTransitionInThirtyTwoIsTimed() {
        int timed = 0;
        for (int rnd = 0; rnd < 32 * 1000; rnd++) {
            timed += LatencyBuckets.trackedSince(rnd * 0x9E3779B1) != 0 ? 1 : 0;
        }
        assertThat(timed).isEqualTo(1000);
        assertThat(LatencyBuckets.trackedSince(32)).isNotZero();
        assertThat(LatencyBuckets.trackedSince(8)).isZero();
        assertThat(LatencyBuckets.trackedSince(31)).isZero();
    }
}
