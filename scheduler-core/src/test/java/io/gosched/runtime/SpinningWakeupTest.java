package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How many Ms a wake-up costs. A goroutine readied from a platform thread while every P is idle
 * (a Netty thread completing a channel operation, the service's path) needs one M: the spinner
 * that wakep starts finds the G in the global queue and runs it. Go's resetspinning would then
 * wake a second spinner, which finds nothing and parks again, its futex wake-up paid before the
 * G runs; this runtime wakes one only when a spinner could take something (see resetspinning).
 */
@Timeout(60)
class SpinningWakeupTest {

    @Test
    void aGoroutineReadiedFromOutsideWhileEveryPIsIdleWakesOneM() throws Exception {
        int sends = 200;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Integer> ch = Chan.make();
            Chan<Long> done = Chan.make(1);
            rt.run(() -> {
                Go.go(() -> {
                    long sum = 0;
                    for (int i = 0; i < sends; i++) {
                        sum += ch.recv();
                    }
                    done.send(sum);
                });
                return null;
            });
            long before = 0;
            for (int i = 0; i < sends; i++) {
                awaitIdle(rt);
                if (i == 0) {
                    before = rt.sched().spinnerStarts.get();
                }
                ch.sendAsync(i).get(10, TimeUnit.SECONDS);
            }
            long starts = rt.sched().spinnerStarts.get() - before;
            assertThat(done.recvAsync().get(10, TimeUnit.SECONDS).value()).isEqualTo((long) sends * (sends - 1) / 2);
            // One per send, and a few for whatever else ran meanwhile (sysmon's retakes, the
            // receiver's own hand-offs); two per send is the unconditional chain.
            assertThat(starts).as("spinning Ms started for %d wake-ups", sends).isLessThan(sends * 5L / 4);
        }
    }

    /** Until both Ps are idle and no M spins: the receiver is parked and the runtime asleep. */
    private static void awaitIdle(GoRuntime rt) {
        Sched s = rt.sched();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.npidle.get() < s.gomaxprocs || s.nmspinning.get() != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the runtime did not go idle: npidle " + s.npidle.get() + ", nmspinning " + s.nmspinning.get());
            }
            LockSupport.parkNanos(100_000);
        }
    }
}
