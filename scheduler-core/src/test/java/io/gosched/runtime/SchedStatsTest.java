package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** SchedStats' groups: what they hold, and that they agree with the flat figures. */
class SchedStatsTest {

    private static final LatencyHistogram EMPTY = new LatencyHistogram(new double[] {Double.POSITIVE_INFINITY}, new long[] {0}, 0, 0);

    @Test
    @SuppressWarnings("deprecation")
    void theFlatConstructorPutsEachFigureInItsGroupAndTheOldAccessorsReadThemBack() {
        SchedStats s = new SchedStats(1, 2, 3, 4, 5, 6, 7, new int[] {8}, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                18, 19, 20, 21, 22, EMPTY, List.of(), 23, 24);
        assertThat(s.handoffsByCause()).isEqualTo(new SchedStats.Handoffs(18, 19));
        assertThat(s.goroutinesByState()).isEqualTo(new SchedStats.GoroutineStates(20, 21, 22));
        assertThat(s.uptimeNanos()).isEqualTo(23);
        assertThat(s.leakedGoroutines()).isEqualTo(24);
        assertThat(List.of(s.preemptHandoffs(), s.syscallHandoffs(), s.runnableGoroutines(), s.waitingGoroutines(),
                s.syscallGoroutines())).containsExactly(18L, 19L, 20L, 21L, 22L);
        assertThat(new SchedStats(1, 2, 3, 4, 5, 6, 7, new int[] {8}, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                18, 19, 20, 21, 22, EMPTY, List.of(), 23).leakedGoroutines()).isZero();
    }

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
