package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** gomaxprocs(n) (stop-the-world and procresize) and shutdown, called from goroutines. */
@Timeout(120)
class StopTheWorldTest {

    /**
     * Go: TestStopTheWorldDeadlock. GOMAXPROCS 3; two goroutines and a platform thread keep
     * resizing while a self-respawning goroutine chain runs (Go's perpetuumMobile). A goroutine
     * waiting to resize must not hold up the resize in progress: before, it blocked its M on a
     * monitor with its P RUNNING, and the stop-the-world waited for that P forever.
     */
    @Test
    void stopTheWorldDeadlock() throws Exception {
        int rounds = 200 * STRESS;
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(3)
                .onUncaughtException((thread, t) -> errors.add(t)).build())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong mobile = new AtomicLong();
            rt.go(new Runnable() { // perpetuumMobile: each goroutine starts the next
                @Override
                public void run() {
                    mobile.incrementAndGet();
                    if (!stop.get()) {
                        Go.go(this);
                    }
                }
            });
            CountDownLatch compl = new CountDownLatch(3);
            for (int g = 0; g < 2; g++) {
                int base = g;
                rt.go(() -> {
                    for (int i = 0; i < rounds; i++) {
                        rt.gomaxprocs(2 + (i + base) % 3);
                    }
                    compl.countDown();
                });
            }
            Thread outside = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < rounds; i++) {
                    rt.gomaxprocs(1 + i % 4);
                }
                compl.countDown();
            });
            boolean finished = compl.await(60, TimeUnit.SECONDS);
            stop.set(true);
            assertThat(finished).as("resizers finished (%d left): no deadlock", compl.getCount()).isTrue();
            outside.join();
            assertThat(errors).isEmpty();
            assertThat(mobile.get()).as("the chain kept running").isPositive();
            rt.gomaxprocs(3);
            assertThat(rt.run(() -> rt.gomaxprocs())).isEqualTo(3);
        }
    }

    /** gomaxprocs(n) from inside a Go.syscall body (the G holds no P already) completes. */
    @Test
    void gomaxprocsFromAGoroutineInsideASyscallBody() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            int old = rt.run(() -> Go.syscall(() -> rt.gomaxprocs(3)));
            assertThat(old).isEqualTo(2);
            assertThat(rt.gomaxprocs()).isEqualTo(3);
        }
    }

    /**
     * shutdown() from inside a goroutine does not count the caller as live: with no other
     * goroutine it returns true at once, instead of waiting its whole timeout and returning false.
     */
    @Test
    void shutdownFromInsideAGoroutine() throws Exception {
        GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
        CountDownLatch others = new CountDownLatch(50);
        for (int i = 0; i < 50; i++) {
            rt.go(() -> {
                Go.sleep(Duration.ofMillis(20));
                others.countDown();
            });
        }
        long t0 = System.nanoTime();
        boolean clean = rt.run(() -> rt.shutdown(Duration.ofSeconds(20)));
        long took = System.nanoTime() - t0;
        assertThat(clean).as("shutdown from a goroutine reported clean").isTrue();
        assertThat(others.getCount()).as("it waited for the other goroutines").isZero();
        assertThat(took).as("it did not wait for its own end").isLessThan(TimeUnit.SECONDS.toNanos(20));
        assertThat(rt.isShutdown()).isTrue();
        GoTesting.await("every M stopped", () -> rt.stats().threads() == 0);
    }
}
