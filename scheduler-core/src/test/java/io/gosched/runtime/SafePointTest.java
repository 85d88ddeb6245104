package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.time.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hook the preemption agent inserts ({@link SafePoint#poll()}), called here by hand in the
 * shape the agent produces: a loop whose only safe point is the poll. The agent's own tests
 * (module scheduler-agent) run the same checks on instrumented code.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a loop never preempted fails instead of hanging
class SafePointTest {

    static volatile boolean stop;

    /** The agent's output for {@code while (!stop) i++;}. */
    static long pollingLoop() {
        SafePoint.poll();
        long i = 0;
        while (!stop) {
            i++;
            SafePoint.poll();
        }
        return i;
    }

    static GoRuntime start(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    @Test
    void pollOutsideAGoroutineDoesNothing() {
        for (int i = 0; i < 1000; i++) {
            SafePoint.poll();
        }
        GoTesting.await("no runtime has a goroutine asked to yield", () -> SafePoint.pending() == 0);
    }

    /**
     * On one P a loop whose only safe point is the poll is preempted about every quantum and the
     * goroutine next to it keeps running; no spare P is needed. Afterwards the JVM-wide word is
     * lowered again, so polls everywhere are back to one load.
     */
    @Test
    void aPollingLoopIsPreemptedAtTheQuantumAndTheFlagIsLoweredAfter() throws Exception {
        long quantum = SchedulerConfig.defaults().preemptQuantum().toNanos();
        try (GoRuntime rt = start(1)) {
            SchedStats before = rt.stats();
            long[] out = rt.run(() -> {
                stop = false;
                AtomicLong iterations = new AtomicLong();
                Chan<Boolean> done = Chan.make(1);
                Ticker ticker = Ticker.newTicker(Duration.ofMillis(1));
                long t0 = System.nanoTime();
                Go.go(() -> {
                    iterations.set(pollingLoop());
                    done.send(true);
                });
                Thread.ofPlatform().daemon(true).start(() -> {
                    GoTesting.pause(500);
                    stop = true;
                });
                long ticks = 0;
                while (!stop) {
                    ticker.c().recv();
                    ticks++;
                }
                ticker.stop();
                done.recv();
                return new long[] {ticks, iterations.get(), System.nanoTime() - t0};
            });
            SchedStats after = rt.stats();
            long quanta = out[2] / quantum;
            assertThat(out[1]).as("the loop ran").isPositive();
            assertThat(after.preemptions() - before.preemptions()).as("preemptions in %d quanta", quanta).isGreaterThanOrEqualTo(quanta / 4);
            assertThat(out[0]).as("ticks in %d quanta", quanta).isGreaterThanOrEqualTo(quanta / 4);
            assertThat(after.handoffsByCause().preempt() - before.handoffsByCause().preempt()).as("spare Ps lent").isZero();
            GoTesting.await("the flag is lowered once nobody is asked", () -> SafePoint.pending() == 0);
        }
    }

    /** A stop-the-world (a gomaxprocs change) preempts loops whose only safe point is the poll. */
    @Test
    void aStopTheWorldPreemptsPollingLoops() throws Exception {
        try (GoRuntime rt = start(3)) {
            rt.run(() -> {
                stop = false;
                AtomicInteger ended = new AtomicInteger();
                for (int i = 0; i < 2; i++) {
                    Go.go(() -> {
                        pollingLoop();
                        ended.incrementAndGet();
                    });
                }
                for (int i = 0; i < 5; i++) {
                    Go.yield();
                    rt.gomaxprocs(i % 2 == 0 ? 4 : 3);
                }
                stop = true;
                GoTesting.await("the loops end", () -> ended.get() == 2);
                return null;
            });
        }
        GoTesting.await("the flag is lowered", () -> SafePoint.pending() == 0);
    }
}
