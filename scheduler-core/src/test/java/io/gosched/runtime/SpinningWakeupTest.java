package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How many Ms a wake-up costs. A goroutine readied from a platform thread while every P is idle
 * (a Netty thread completing a channel operation, the service's path) needs one M: the spinner
 * that wakep starts finds the G in the global queue and runs it. Go's resetspinning would then
 * wake a second spinner, which finds nothing and parks again, its futex wake-up paid before the
 * G runs; this runtime wakes one only when a spinner could take something (see resetspinning).
 * And beside a ping-pong pair, the other P's M naps instead of being woken again and again, but
 * not through work it could take.
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

    /**
     * A ping-pong pair on two Ps keeps one G in its P's runnext. The other P's M, backing off
     * from that runnext, naps beside the pair holding its P (see "Napping beside a hand-off
     * chain" in Scheduler) instead of parking between two of the pair's puts, where the pair's
     * next goready would wake it again through wakep: that cycle started a spinning M every
     * 130-300 round trips.
     */
    @Test
    void aPingPongPairOnTwoPsDoesNotKeepWakingTheOtherPsM() throws Exception {
        int rounds = 200_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            long starts = rt.run(() -> {
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                Go.go(() -> {
                    for (int i = 0; i < 2 * rounds; i++) {
                        pong.send(ping.recv() + 1);
                    }
                });
                long before = 0;
                for (long i = 0; i < 2 * rounds; i++) {
                    if (i == rounds) {
                        before = rt.sched().spinnerStarts.get(); // the first half warms up
                    }
                    ping.send(i);
                    pong.recv();
                }
                return rt.sched().spinnerStarts.get() - before;
            });
            // Seen: 23-26 quiet, 46-80 with two busy loops on the two cores; parking instead of
            // napping, 1,481-2,508 quiet and 687-1,190 loaded.
            assertThat(starts).as("spinning Ms started during %d round trips of a pair on 2 Ps", rounds)
                    .isLessThan(rounds / 500);
        }
    }

    /**
     * What the napping M must not delay: a goroutine that the pair's P puts in its ring (a go
     * beside the pair, whose new G displaces the one in runnext) ends the nap at once, and is
     * stolen and run while the pair goes on. Sysmon is off so that no preemption puts the pair's
     * goroutines into the global queue, which wakes the napper too.
     */
    @Test
    void aGoroutinePutInTheRingBesideAPingPongPairEndsTheOtherMsNap() throws Exception {
        int spawns = 200;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).sysmon(false).build())) {
            long before = rt.sched().napperWakes.get();
            long[] wakes = new long[1];
            long ran = rt.run(() -> {
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                AtomicLong done = new AtomicLong();
                int rounds = 100_000;
                Go.go(() -> {
                    for (int i = 0; i < rounds; i++) {
                        pong.send(ping.recv() + 1);
                    }
                });
                for (long i = 0; i < rounds; i++) {
                    if (i % (rounds / spawns) == rounds / spawns - 1) {
                        Go.go(done::incrementAndGet); // runnext, then the ring at the pair's next goready
                    }
                    ping.send(i);
                    pong.recv();
                }
                wakes[0] = rt.sched().napperWakes.get() - before; // before the yields below, which put into the global queue
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (done.get() < spawns && System.nanoTime() < deadline) {
                    Go.yield();
                }
                return done.get();
            });
            assertThat(ran).as("goroutines spawned beside the pair that ran").isEqualTo(spawns);
            // About half the spawns land while the other M naps (90-123 of 200 seen); without
            // the wake on ring puts, none: nothing else puts into a ring or the global queue here.
            assertThat(wakes[0]).as("naps ended by a put into a ring while the pair ran").isGreaterThanOrEqualTo(spawns / 10);
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
