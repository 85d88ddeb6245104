package io.gosched.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The arithmetic and the parsing behind the parked and wakeup rows. */
class FootprintTest {
    private static final String STATUS = """
            Name:\tjava
            VmPeak:\t 5000000 kB
            VmHWM:\t  300000 kB
            VmRSS:\t  123456 kB
            RssAnon:\t  100000 kB
            Threads:\t20
            """;

    @Test
    void vmRssIsReadInBytesFromItsOwnLine() {
        assertThat(Footprint.vmRssBytes(STATUS)).isEqualTo(123_456L * 1024);
    }

    @Test
    void aStatusWithoutVmRssOrInAnotherUnitIsAnError() {
        assertThatThrownBy(() -> Footprint.vmRssBytes("Name:\tjava\nVmHWM:\t1 kB\n")).hasMessageContaining("no VmRSS");
        assertThatThrownBy(() -> Footprint.vmRssBytes("VmRSS:\t 12 MB\n")).hasMessageContaining("unexpected VmRSS");
    }

    @Test
    void thisProcessHasAnRssAndAHeap() {
        Footprint.Snapshot s = Footprint.settle();
        assertThat(s.heapBytes()).isPositive();
        assertThat(s.rssBytes()).isGreaterThan(s.heapBytes() / 2);   // a JVM's RSS holds at least its live heap's pages
    }

    @Test
    void settleSeesRetainedObjectsAndNotGarbage() {
        Footprint.Snapshot before = Footprint.settle();
        List<long[]> kept = new ArrayList<>();
        for (int i = 0; i < 256; i++) kept.add(new long[16 * 1024]);   // 32 MB retained (128 KB each: no humongous regions)
        for (int i = 0; i < 256; i++) new long[16 * 1024].clone();     // 32 MB garbage
        Footprint.Snapshot after = Footprint.settle();
        assertThat(after.heapBytes() - before.heapBytes()).isBetween(30L << 20, 36L << 20);
        assertThat(kept).hasSize(256);
    }

    @Test
    void parkedReportsBytesPerGoroutineOverBothBaselines() {
        Result r = Measures.parked(1000, new Footprint.Snapshot(10_000_000, 100_000_000),
                new Footprint.Snapshot(11_500_000, 102_000_000), 499_500);
        assertThat(r.check()).isEqualTo(499_500);
        assertThat(r.metrics().get("heap_b")).isEqualTo(1500.0);
        assertThat(r.metrics().get("rss_b")).isEqualTo(2000.0);
    }

    @Test
    void parkedWithoutRssKeepsTheHeapAndWithoutAHeapFailsTheCheck() {
        Result noRss = Measures.parked(10, new Footprint.Snapshot(100, -1), new Footprint.Snapshot(200, -1), 45);
        assertThat(noRss.metrics().get("rss_b")).isNaN();
        assertThat(noRss.check()).isEqualTo(45);
        assertThat(Measures.parked(10, new Footprint.Snapshot(0, 1), new Footprint.Snapshot(200, 2), 45).check()).isZero();
    }

    @Test
    void wakeupPercentilesAreNearestRankInMicroseconds() {
        long[] lat = new long[100];
        for (int i = 0; i < 100; i++) lat[i] = (100 - i) * 1_000L;   // 100..1 µs, unsorted
        Result r = Measures.wakeup(lat, 100, 0);
        assertThat(r.check()).isEqualTo(100);
        assertThat(r.metrics().get("p50_us")).isEqualTo(50.0);
        assertThat(r.metrics().get("p99_us")).isEqualTo(99.0);
        assertThat(r.metrics().get("max_us")).isEqualTo(100.0);
    }

    @Test
    void aNegativeWakeupSampleFailsTheCheck() {
        Result r = Measures.wakeup(new long[] {5_000, -1, 7_000}, 3, 2);
        assertThat(r.check()).isEqualTo(2);
        assertThat(r.metrics().get("missed")).isEqualTo(2.0);
    }

    @Test
    void theDriverWaitsForEachSampleAndRetriesASendThatFoundNoReceiver() throws Exception {
        AtomicLong received = new AtomicLong();
        List<Long> sends = new ArrayList<>();
        List<Thread> receivers = new ArrayList<>();
        int[] attempts = {0};
        long t0 = System.nanoTime();
        long missed = Measures.driveWakeups(4, received::get, t -> {
            // The second attempt of every sample finds no receiver waiting.
            if (++attempts[0] % 2 == 0) return false;
            assertThat(received.get()).as("sent before the previous sample was recorded").isEqualTo(sends.size());
            sends.add(t);
            // The receiver records the sample 5 ms later: longer than a gap, so only waiting helps.
            receivers.add(Thread.startVirtualThread(() -> {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                received.incrementAndGet();
            }));
            return true;
        }, true);
        long elapsed = System.nanoTime() - t0;
        for (Thread r : receivers) r.join();
        assertThat(sends).hasSize(4).isSorted();
        assertThat(missed).isEqualTo(3);   // attempts 2, 4, 6 failed; 1, 3, 5, 7 delivered
        long gaps = 0;
        for (int i = 0; i < 4; i++) gaps += BenchWorkload.wakeGapNanos(i);
        assertThat(elapsed).isGreaterThanOrEqualTo(gaps);   // an idle gap before every attempt
    }

    @Test
    void withoutRetryAMissedSendStillCountsAsTheSample() {
        AtomicLong received = new AtomicLong();
        long missed = Measures.driveWakeups(3, received::get, t -> {
            received.incrementAndGet();
            return false;   // sendAsync left the value pending: it is delivered later all the same
        }, false);
        assertThat(missed).isEqualTo(3);
        assertThat(received.get()).isEqualTo(3);
    }

    @Test
    void wakeGapsLieBetweenOneAndTwoMillisecondsAndMatchTheGoFormula() {
        for (long i = 0; i < 5_000; i++) assertThat(BenchWorkload.wakeGapNanos(i)).isBetween(1_000_000L, 1_999_000L);
        // bench/go/main.go: time.Duration(1_000_000 + (i*7919%1000)*1000)
        assertThat(BenchWorkload.wakeGapNanos(0)).isEqualTo(1_000_000);
        assertThat(BenchWorkload.wakeGapNanos(1)).isEqualTo(1_000_000 + 919_000);
        assertThat(BenchWorkload.wakeGapNanos(1999)).isEqualTo(1_000_000 + (1999L * 7919 % 1000) * 1000);
    }

    @Test
    void theNewRowsExpectTheirChecks() {
        assertThat(BenchWorkload.PARKED.expected(1_000_000, 10_000)).isEqualTo(1_000_000L * 999_999 / 2);
        assertThat(BenchWorkload.WAKEUP.expected(2_000, 0)).isEqualTo(2_000);
        assertThat(BenchWorkload.of("parked").metrics()).containsExactly("heap_b", "rss_b");
        assertThat(BenchWorkload.of("wakeup").metrics()).containsExactly("p50_us", "p99_us");
    }
}
