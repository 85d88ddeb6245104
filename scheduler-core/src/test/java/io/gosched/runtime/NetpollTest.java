package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The netpoller's own protocol: break, readiness delivery, waiters. */
@Timeout(60)
class NetpollTest {

    /** Go: TestNetpollBreak — a poller blocked for 10 s returns soon after netpollBreak. */
    @Test
    void netpollBreak() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).sysmon(false).build())) {
            Sched s = rt.sched();
            Netpoll np = s.netpoll;
            CountDownLatch returned = new CountDownLatch(1);
            AtomicReference<Long> took = new AtomicReference<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!np.polling.compareAndSet(false, true)) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.onSpinWait();
            }
            Thread poller = Thread.ofPlatform().start(() -> {
                long t0 = System.nanoTime();
                s.lastpoll.set(0);
                try {
                    np.netpoll(TimeUnit.SECONDS.toNanos(10));
                } finally {
                    s.lastpoll.set(System.nanoTime() | 1);
                    np.polling.set(false);
                }
                took.set(System.nanoTime() - t0);
                returned.countDown();
            });
            long start = System.nanoTime();
            while (returned.getCount() > 0 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5)) {
                np.netpollBreak();
                np.netpollBreak();
                Thread.sleep(0, 100_000);
            }
            assertTrue(returned.await(5, TimeUnit.SECONDS), "netpoll did not return after netpollBreak");
            poller.join();
            assertThat(took.get()).isLessThan(TimeUnit.SECONDS.toNanos(5));
        }
    }

    /** A goroutine parked on a pipe wakes when another writes, and is counted as netpoll-ready. */
    @Test
    void readinessWakesAParkedGoroutineAndIsCounted() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Pipe pipe = Pipe.open();
            pipe.source().configureBlocking(false);
            int rounds = 3;
            java.util.concurrent.atomic.AtomicInteger got = new java.util.concurrent.atomic.AtomicInteger();
            rt.go(() -> {
                try (PollDesc pd = PollDesc.open(pipe.source())) {
                    ByteBuffer b = ByteBuffer.allocate(1);
                    for (int i = 0; i < rounds; i++) {
                        b.clear();
                        while (pipe.source().read(b) == 0) {
                            pd.waitRead();
                        }
                        got.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            // One byte per round, each written once the reader waits again. Awaited, not slept for
            // (at load 14 the goroutine had not reached its park 50 ms after rt.go). In the first
            // round "waiting" may still be the descriptor's opening rather than the read's park,
            // and then the byte is there before the reader parks (seen: schedules=1,
            // netpollReady=0, under a CI's load); from the second round on the reader has nothing
            // else to wait in, so at least one wake-up comes through the poller.
            for (int i = 1; i <= rounds; i++) {
                GoTesting.await("the reader waits", () -> {
                    SchedStats s = rt.stats();
                    return s.schedules() >= 1 && s.goroutinesByState().waiting() == 1 && s.goroutinesByState().runnable() == 0;
                });
                pipe.sink().write(ByteBuffer.wrap(new byte[] {(byte) i}));
                int round = i;
                GoTesting.await("the reader read byte " + i, () -> got.get() >= round);
            }
            // Counted after the ready goroutines are injected: it may trail the wake-up a moment.
            GoTesting.await("netpollReady > 0", () -> rt.stats().netpollReady() > 0);
            pipe.sink().close();
            pipe.source().close();
        }
    }

    /** Platform threads may wait on a descriptor too: the runtime's poller unparks them. */
    @Test
    void platformThreadWaitsOnADescriptor() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            Pipe pipe = Pipe.open();
            pipe.source().configureBlocking(false);
            PollDesc pd = PollDesc.open(rt, pipe.source());
            Thread writer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(30);
                    pipe.sink().write(ByteBuffer.wrap(new byte[] {7}));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ByteBuffer b = ByteBuffer.allocate(1);
            while (pipe.source().read(b) == 0) {
                pd.waitRead();
            }
            assertThat(b.get(0)).isEqualTo((byte) 7);
            writer.join();
            pd.close();
            pipe.sink().close();
            pipe.source().close();
        }
    }

    /**
     * A wait that cannot park (the goroutine is inside Go.procPin) fails, and gives its wait slot
     * back: a later wait on the same descriptor parks normally. Before, the slot stayed at WAIT
     * and every later read failed with "concurrent read waits".
     */
    @Test
    void aPinnedWaitGivesItsSlotBack() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Pipe pipe = Pipe.open();
            pipe.source().configureBlocking(false);
            String r = rt.run(() -> {
                try (PollDesc pd = PollDesc.open(pipe.source())) {
                    Go.procPin();
                    String first;
                    try {
                        pd.waitRead();
                        first = "parked while pinned";
                    } catch (IllegalStateException cannotPark) {
                        first = "refused";
                    } finally {
                        Go.procUnpin();
                    }
                    Go.go(() -> {
                        Go.sleep(java.time.Duration.ofMillis(20));
                        try {
                            pipe.sink().write(ByteBuffer.wrap(new byte[] {9}));
                        } catch (java.io.IOException e) {
                            throw new RuntimeException(e);
                        }
                    });
                    ByteBuffer b = ByteBuffer.allocate(1);
                    while (pipe.source().read(b) == 0) {
                        pd.waitRead();
                    }
                    return first + ", then read " + b.get(0);
                }
            });
            assertThat(r).isEqualTo("refused, then read 9");
            pipe.sink().close();
            pipe.source().close();
        }
    }
}
