package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TraceTest {

    @Test
    void recordsRunsParksUnparksAndStealsPerP() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Trace.Recording rec = Trace.start(100_000);
            try {
                assertThrows(IllegalStateException.class, () -> Trace.start(10), "one recording at a time");
                CountDownLatch done = new CountDownLatch(200);
                rt.run(() -> {
                    Chan<Integer> c = Chan.make();
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        c.recv();
                    }
                    // Skewed: every child starts on this P; the other P must steal.
                    for (int i = 0; i < 200; i++) {
                        Go.go(() -> {
                            long end = System.nanoTime() + 100_000;
                            while (System.nanoTime() < end) {
                                Go.checkpoint();
                            }
                            done.countDown();
                        });
                    }
                    return null;
                });
                assertTrue(done.await(30, TimeUnit.SECONDS));
            } finally {
                rec.stop();
            }
            List<Trace.Event> events = rec.stop();
            assertThat(Trace.isRecording()).isFalse();
            var kinds = events.stream().collect(Collectors.groupingBy(Trace.Event::kind, Collectors.counting()));
            assertThat(kinds).containsKeys(Trace.GO_CREATE, Trace.GO_START, Trace.GO_END, Trace.GO_PARK,
                    Trace.GO_UNPARK, Trace.STEAL);
            assertThat(events.stream().filter(e -> e.kind().equals(Trace.GO_START)).map(Trace.Event::p).distinct())
                    .as("runs on both Ps").containsExactlyInAnyOrder(0, 1);
            for (int i = 1; i < events.size(); i++) {
                assertThat(events.get(i).tsNanos()).isGreaterThanOrEqualTo(events.get(i - 1).tsNanos());
            }
            assertThat(rec.dropped()).isZero();
        }
    }

    @Test
    void ringsKeepTheNewestAndCountWhatTheyDropped() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            Trace.Recording rec = Trace.start(8);
            rt.run(() -> {
                for (int i = 0; i < 100; i++) {
                    Go.yield();
                }
                return null;
            });
            List<Trace.Event> events = rec.stop();
            assertThat(rec.dropped()).isPositive();
            assertThat(events.size()).isLessThanOrEqualTo(8 * 2 + 8);
        }
        assertThrows(IllegalArgumentException.class, () -> Trace.start(0));
    }
}
