package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.SchedStats;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SchedStatsSourceTest {

    @Test
    void oneReadServesEveryCallerWithinTheTtlAndANewReadAfterIt() {
        AtomicInteger reads = new AtomicInteger();
        AtomicLong now = new AtomicLong(1_000);
        SchedStatsSource source = FakeStats.source(() -> FakeStats.of(2, reads.incrementAndGet()),
                Duration.ofMillis(20), now::get);

        SchedStats first = source.stats();
        for (int i = 0; i < 50; i++) { // a scrape: fifty meters
            now.addAndGet(100_000);     // 0.1 ms each, 5 ms in all
            assertThat(source.stats()).isSameAs(first);
        }
        assertThat(reads).hasValue(1);

        now.addAndGet(Duration.ofMillis(20).toNanos());
        assertThat(source.stats()).isNotSameAs(first);
        assertThat(reads).hasValue(2);
    }
}
