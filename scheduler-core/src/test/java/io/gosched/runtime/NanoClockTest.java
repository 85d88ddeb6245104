package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.time.Time;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SchedulerConfig.nanoClock is the runtime's clock: its sleeps and timers fire when that clock
 * says so, not when System.nanoTime does.
 */
@Timeout(120)
class NanoClockTest {

    /**
     * Starts a runtime on the given clock with one P kept busy by a goroutine that yields in a
     * loop, so the P's M goes through findRunnable (and its timer check) all the time instead of
     * sleeping in netpoll for the real length of the fake wait.
     */
    static GoRuntime busyRuntime(java.util.function.LongSupplier clock, AtomicBoolean stop) {
        GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).nanoClock(clock).build());
        rt.go(() -> {
            while (!stop.get()) {
                Go.yield();
            }
        });
        return rt;
    }

    @Test
    void anHourLongSleepAndTimerFireOnceTheClockJumpsAnHour() throws Exception {
        AtomicLong offset = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch slept = new CountDownLatch(1);
        CountDownLatch fired = new CountDownLatch(1);
        try (GoRuntime rt = busyRuntime(() -> System.nanoTime() + offset.get(), stop)) {
            try {
                rt.go(() -> {
                    Go.sleep(Duration.ofHours(1));
                    slept.countDown();
                });
                rt.go(() -> Time.afterFunc(Duration.ofHours(1), fired::countDown));
                assertThat(slept.await(300, TimeUnit.MILLISECONDS)).as("slept before the clock moved").isFalse();
                offset.addAndGet(Duration.ofHours(2).toNanos());
                assertThat(slept.await(20, TimeUnit.SECONDS)).as("the sleep ended on the runtime's clock").isTrue();
                assertThat(fired.await(20, TimeUnit.SECONDS)).as("the timer fired on the runtime's clock").isTrue();
            } finally {
                stop.set(true); // before close, which waits for the busy goroutine
            }
        }
    }

    @Test
    void aShortSleepWaitsWhileTheClockStandsStill() throws Exception {
        long start = System.nanoTime();
        AtomicLong now = new AtomicLong(start);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch slept = new CountDownLatch(1);
        try (GoRuntime rt = busyRuntime(now::get, stop)) {
            try {
                rt.go(() -> {
                    Go.sleep(Duration.ofMillis(10));
                    slept.countDown();
                });
                assertThat(slept.await(500, TimeUnit.MILLISECONDS)).as("10 ms went by on a clock that stood still").isFalse();
                now.addAndGet(Duration.ofMillis(10).toNanos());
                assertThat(slept.await(20, TimeUnit.SECONDS)).as("the sleep ended once the clock moved 10 ms").isTrue();
            } finally {
                stop.set(true); // before close, which waits for the busy goroutine
            }
        }
    }
}
