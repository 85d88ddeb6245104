package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** SchedStats' groups agree with its flat figures in a live snapshot. */
class SchedStatsTest {

    private static final LatencyHistogram EMPTY = new LatencyHistogram(new double[] {Double.POSITIVE_INFINITY}, new long[] {0}, 0, 0);

    @Test
    void aSnapshotsGroupsAgreeWithItsFlatFigures() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            CountDownLatch inSyscall = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            rt.go(() -> {
                try {
                    Go.syscall(() -> {
                        inSyscall.countDown();
                        return release.await(30, TimeUnit.SECONDS);
                    });
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertTrue(inSyscall.await(10, TimeUnit.SECONDS));
            CountDownLatch ran = new CountDownLatch(1);
            rt.go(ran::countDown); // needs the P the syscall holds: sysmon hands it off
            assertTrue(ran.await(10, TimeUnit.SECONDS));
            SchedStats s = rt.stats();
            release.countDown();

            assertThat(s.handoffsByCause().syscall()).as("sysmon retook the P from the syscall").isPositive();
            assertThat(s.handoffs()).as("handoffs is the sum of its causes").isEqualTo(s.handoffsByCause().total());
            assertThat(s.goroutinesByState().runnable()).as("runnable = global + local queues")
                    .isEqualTo(s.globalRunqueue() + Arrays.stream(s.localRunqueues()).sum());
            assertThat(s.goroutinesByState().syscall()).as("one goroutine, on one M, in a syscall")
                    .isEqualTo(s.syscallThreads()).isEqualTo(1);
            assertThat(s.goroutinesByState().runnable() + s.goroutinesByState().waiting() + s.goroutinesByState().syscall())
                    .as("the not-running states never count more goroutines than live").isLessThanOrEqualTo(s.goroutines());
        }
    }
}
