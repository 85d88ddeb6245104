package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The direct hand-off (Scheduler, "Direct hand-off"): a goroutine about to park in a channel
 * operation runs the partner in its runnext on top of its own frames when that partner is the
 * one whose hand-off readied it last, and goes on without parking if the partner readies it.
 * These tests pin when it happens, when it must not, and that no hand-off is lost.
 */
class DirectHandOffTest {

    /**
     * Hand-offs run on top so far, all Ps of rt, the spares too: sysmon lends one when a
     * goroutine seems to hog its P (a cold first freeze of thousands of frames can look so).
     */
    private static long nested(GoRuntime rt) {
        Sched s = rt.sched();
        long n = 0;
        for (P pp : s.allp) {
            if (pp != null) {
                n += pp.counter(P.C_NESTED);
            }
        }
        for (P pp : s.spares) {
            n += pp.counter(P.C_NESTED);
        }
        return n;
    }

    /** Whether the calling goroutine runs on top of a parked partner right now. */
    private static boolean onTop() {
        G gp = Scheduler.getg();
        return gp != null && gp.m.nested;
    }

    /** A ping-pong pair on one P: nearly every round trip runs the partner on top (one per round trip). */
    @Test
    void aPingPongPairRunsThePartnerOnTopOfTheParkingGoroutine() throws Exception {
        int roundTrips = 100_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            long before = nested(rt);
            rt.run(() -> {
                GoTesting.pingPong(roundTrips);
                return null;
            });
            assertThat(nested(rt) - before).as("hand-offs run on top in %d round trips", roundTrips)
                    .isBetween(roundTrips * 9L / 10, roundTrips + 10L); // about one per round trip
        }
    }

    /**
     * A chain passes the turn on, never back: the next goroutine did not ready the one parking,
     * so it is not run on top (it would be frozen on its way back all the same, for nothing).
     */
    @Test
    void aChainDoesNotRunTheNextGoroutineOnTop() throws Exception {
        int n = 100;
        int traversals = 1_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            long before = nested(rt);
            long sum = rt.run(() -> {
                @SuppressWarnings("unchecked")
                Chan<Long>[] links = new Chan[n + 1];
                for (int i = 0; i <= n; i++) {
                    links[i] = Chan.make();
                }
                for (int i = 0; i < n; i++) {
                    Chan<Long> in = links[i];
                    Chan<Long> out = links[i + 1];
                    Go.go(() -> {
                        for (int t = 0; t < traversals; t++) {
                            out.send(in.recv() + 1);
                        }
                    });
                }
                long s = 0;
                for (int t = 0; t < traversals; t++) {
                    links[0].send(0L);
                    s += links[n].recv();
                }
                return s;
            });
            assertThat(sum).isEqualTo((long) n * traversals);
            long hops = (long) (n + 1) * traversals;
            assertThat(nested(rt) - before).as("hand-offs run on top in %d hops of a chain", hops).isLessThan(hops / 100);
        }
    }

    /**
     * Servers answering fan-in requests from many clients (each client readies its server, which
     * then runs the client on top while it parks; other clients, on other Ps or platform threads,
     * ready a server whose guest did not), beside plain ping-pong pairs, with random work between
     * operations: every request is answered once with its own value, every pair's count comes
     * back, nothing is left hanging.
     */
    @ParameterizedTest(name = "{0} Ps, randomized {1}")
    @CsvSource({"1, false", "2, false", "2, true", "4, false", "4, true"})
    void noHandOffIsLostWithServersPairsAndThirdParties(int procs, boolean randomize) throws Exception {
        int servers = 4;
        int clientsPerServer = 4;
        int threadClients = 2;
        int pairs = 8;
        int requests = 2_000 * STRESS;
        int roundTrips = 5_000 * STRESS;
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        AtomicLong answered = new AtomicLong();
        AtomicLong pairTrips = new AtomicLong();
        SchedulerConfig config = SchedulerConfig.builder().directHandOff(true).gomaxprocs(procs).randomizeScheduling(randomize)
                .onUncaughtException((t, e) -> failures.add(e)).build();
        record Req(long value, Chan<Long> reply) {
        }
        try (GoRuntime rt = GoRuntime.start(config)) {
            int parties = servers * (clientsPerServer + 1) + 2 * pairs;
            CountDownLatch done = new CountDownLatch(parties + threadClients);
            @SuppressWarnings("unchecked")
            Chan<Req>[] in = new Chan[servers];
            for (int s = 0; s < servers; s++) {
                Chan<Req> c = Chan.make();
                in[s] = c;
                rt.go(() -> {
                    for (Req r; (r = c.recv()) != null; ) {
                        work();
                        r.reply().send(r.value() + 1);
                    }
                    done.countDown();
                });
            }
            CountDownLatch clientsDone = new CountDownLatch(servers * clientsPerServer + threadClients);
            for (int s = 0; s < servers; s++) {
                Chan<Req> c = in[s];
                for (int k = 0; k < clientsPerServer; k++) {
                    long base = (long) (s * clientsPerServer + k) << 32;
                    rt.go(() -> {
                        Chan<Long> reply = Chan.make();
                        for (long i = 0; i < requests; i++) {
                            c.send(new Req(base + i, reply));
                            long back = reply.recv();
                            if (back != base + i + 1) {
                                throw new AssertionError("request " + (base + i) + " answered " + back);
                            }
                            answered.incrementAndGet();
                            work();
                        }
                        clientsDone.countDown();
                        done.countDown();
                    });
                }
            }
            for (int t = 0; t < threadClients; t++) {
                long base = (1000L + t) << 32;
                Chan<Req> c = in[t % servers];
                Thread.ofPlatform().daemon(true).start(() -> {
                    try {
                        Chan<Long> reply = Chan.make();
                        for (long i = 0; i < requests / 4; i++) {
                            c.send(new Req(base + i, reply));
                            long back = reply.recv();
                            if (back != base + i + 1) {
                                throw new AssertionError("request " + (base + i) + " answered " + back);
                            }
                            answered.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                    clientsDone.countDown();
                    done.countDown();
                });
            }
            for (int p = 0; p < pairs; p++) {
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                rt.go(() -> {
                    for (int i = 0; i < roundTrips; i++) {
                        Long v = ping.recv();
                        work();
                        pong.send(v + 1);
                    }
                    done.countDown();
                });
                rt.go(() -> {
                    for (long i = 0; i < roundTrips; i++) {
                        ping.send(i);
                        long back = pong.recv();
                        if (back != i + 1) {
                            throw new AssertionError("pair: sent " + i + ", got back " + back);
                        }
                        pairTrips.incrementAndGet();
                    }
                    done.countDown();
                });
            }
            assertThat(clientsDone.await(120, TimeUnit.SECONDS)).as("every client got every answer (answered %s)", answered).isTrue();
            for (Chan<Req> c : in) {
                c.close();
            }
            assertThat(done.await(60, TimeUnit.SECONDS)).as("every goroutine finished (pair round trips %s)", pairTrips).isTrue();
        }
        assertThat(failures).as("goroutines or threads that failed").isEmpty();
        assertThat(answered.get()).isEqualTo((long) servers * clientsPerServer * requests + (long) threadClients * (requests / 4));
        assertThat(pairTrips.get()).isEqualTo((long) pairs * roundTrips);
    }

    /** Some work between operations, now and then long enough to cross a safe point or two. */
    private static void work() {
        int n = ThreadLocalRandom.current().nextInt(64);
        if (n == 0) {
            Go.yield();
        }
        for (int i = 0; i < n; i++) {
            Go.checkpoint();
        }
    }

    /**
     * Starts a partner that receives from ab and replies on ba warm times, then waits in
     * gate.recv() and runs afterGate; the caller (a goroutine) plays the other side and returns
     * once the partner is parked in gate.recv(). Then gate.send readies the partner into the
     * caller's runnext, and the caller's next park in a channel operation runs it on top: the
     * partner is the goroutine whose hand-off readied the caller last.
     */
    private static void warmPair(Chan<Long> ab, Chan<Long> ba, Chan<Long> gate, GoTesting.Body afterGate) {
        java.util.concurrent.atomic.AtomicReference<G> partner = new java.util.concurrent.atomic.AtomicReference<>();
        Go.go(() -> {
            partner.set(Scheduler.getg());
            for (int i = 0; i < 10; i++) {
                ba.send(ab.recv() + 1);
            }
            gate.recv();
            try {
                afterGate.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        for (long i = 0; i < 10; i++) {
            ab.send(i);
            ba.recv();
        }
        awaitParked(partner.get());
    }

    /** Yields until g is parked (the caller is a goroutine; g has started). */
    private static void awaitParked(G g) {
        while (g.status() != G.WAITING) {
            Go.yield();
        }
    }

    /**
     * A partner on top that enters a syscall waiting for something its host will do once it goes
     * on steps out first: the host runs (here on the only P) and the syscall returns. On top, the
     * syscall would block the M with the host under it, and the host never comes.
     */
    @Test
    void aGoroutineOnTopStepsOutBeforeASyscall() throws Exception {
        AtomicBoolean wasOnTop = new AtomicBoolean();
        AtomicBoolean syscallSawHost = new AtomicBoolean();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            rt.run(() -> {
                Chan<Long> ab = Chan.make();
                Chan<Long> ba = Chan.make();
                Chan<Long> gate = Chan.make();
                CountDownLatch hostWentOn = new CountDownLatch(1);
                Chan<Boolean> finished = Chan.make(1);
                warmPair(ab, ba, gate, () -> {
                    ab.recv(); // takes the host's value: readies the host under it
                    wasOnTop.set(onTop());
                    syscallSawHost.set(Go.syscall(() -> hostWentOn.await(10, TimeUnit.SECONDS)));
                    finished.send(true);
                });
                gate.send(0L);
                ab.send(100L); // parks: the partner runs on top, takes this value, enters its syscall
                hostWentOn.countDown();
                finished.recv();
                return null;
            });
        }
        assertThat(wasOnTop).as("the partner ran on top of the parking goroutine").isTrue();
        assertThat(syscallSawHost).as("the syscall saw the host go on").isTrue();
    }

    /**
     * The partner blocks its thread in the JDK (a latch's await, not wrapped in Go.syscall),
     * waiting for something the goroutine that just handed off to it will do once it goes on.
     * Nothing tells the runtime. Returns {ran on top, the partner saw the other go on}.
     */
    private static boolean[] guestBlocksInTheJdk(boolean directHandOff, long awaitMillis) throws Exception {
        AtomicBoolean wasOnTop = new AtomicBoolean();
        AtomicBoolean guestSawHost = new AtomicBoolean();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).directHandOff(directHandOff).build())) {
            rt.run(() -> {
                Chan<Long> ab = Chan.make();
                Chan<Long> ba = Chan.make();
                Chan<Long> gate = Chan.make();
                CountDownLatch hostWentOn = new CountDownLatch(1);
                Chan<Boolean> finished = Chan.make(1);
                warmPair(ab, ba, gate, () -> {
                    ab.recv(); // takes the other's value: readies it
                    wasOnTop.set(onTop());
                    try {
                        guestSawHost.set(hostWentOn.await(awaitMillis, TimeUnit.MILLISECONDS));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    finished.send(true);
                });
                gate.send(0L);
                ab.send(100L); // parks; the partner takes this value and blocks its thread
                hostWentOn.countDown();
                finished.recv();
                return null;
            });
        }
        return new boolean[] {wasOnTop.get(), guestSawHost.get()};
    }

    /**
     * By default nothing runs on top, so the readied goroutine waits in runnext, where sysmon's
     * spare P (lent because the M is blocked in the JDK) takes it: the latch opens.
     */
    @Test
    void byDefaultAGoroutineBlockedInTheJdkLeavesItsPartnerFreeToRun() throws Exception {
        boolean[] r = guestBlocksInTheJdk(false, 10_000);
        assertThat(r[0]).as("nothing ran on top by default").isFalse();
        assertThat(r[1]).as("the goroutine blocked in the JDK saw its partner go on").isTrue();
    }

    /**
     * The guarantee the option gives up (SchedulerConfig.directHandOff): a guest blocked in the
     * JDK keeps its host under it until the wait returns, here by its timeout. If this starts to
     * fail, the option got safer: say so in SchedulerConfig and docs/scheduler.md.
     */
    @Test
    void withDirectHandOffAGuestBlockedInTheJdkHoldsItsHostUntilItReturns() throws Exception {
        for (int i = 0; i < 3; i++) {
            boolean[] r = guestBlocksInTheJdk(true, 300);
            if (r[0]) {
                assertThat(r[1]).as("the host stayed under its guest while the guest waited in the JDK").isFalse();
                return;
            }
        }
        throw new AssertionError("the partner never ran on top in three tries");
    }

    /**
     * The same for lockOSThread: a goroutine wired to its thread parks in place, keeping its M;
     * on top of its host, the host would stay under it. It steps out first, and both go on.
     */
    @Test
    void aGoroutineOnTopStepsOutBeforeLockingItsThread() throws Exception {
        AtomicBoolean wasOnTop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(1);
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            Chan<Long> ab = Chan.make();
            Chan<Long> ba = Chan.make();
            Chan<Long> gate = Chan.make();
            Chan<Long> fromHost = Chan.make();
            rt.go(() -> {
                warmPair(ab, ba, gate, () -> {
                    ab.recv(); // takes the host's value: readies the host under it
                    wasOnTop.set(onTop());
                    Go.lockOSThread();
                    try {
                        fromHost.recv(); // parks in place, on its own M
                    } finally {
                        Go.unlockOSThread();
                    }
                    done.countDown();
                });
                gate.send(0L);
                ab.send(100L); // parks: the partner runs on top, takes this value, locks, waits
                fromHost.send(1L);
            });
            assertThat(done.await(20, TimeUnit.SECONDS)).as("the locked partner got what its host sent").isTrue();
        }
        assertThat(wasOnTop).as("the partner ran on top of the parking goroutine").isTrue();
    }

    /**
     * The pair's next hand-off runs the partner on top, which then loops (safe points, no
     * channel operation) until the host has gone on. tag picks how the host is readied: "guest"
     * (the partner takes the host's value, and so readies it, before it loops) or "thread" (the
     * partner takes nothing from the host; a platform thread sends to it). Sysmon is off, so
     * nothing stops the loop unless the hand-off rules do; 2 Ps, so in Go's scheduler (and here
     * without the hand-off on top) the readied host would run on the other P. Returns whether the
     * partner ran on top; fails if the host does not go on. One try of up to three: on 2 Ps a
     * thief may take the partner from runnext before the host parks, and then nothing runs on top.
     */
    private static boolean hostGoesOnWhileItsGuestLoops(String tag) throws Exception {
        AtomicBoolean wasOnTop = new AtomicBoolean();
        AtomicBoolean hostWentOn = new AtomicBoolean();
        CountDownLatch guestLooping = new CountDownLatch(1);
        CountDownLatch guestDone = new CountDownLatch(1);
        boolean byGuest = tag.equals("guest");
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(2).sysmon(false).build())) {
            Chan<Long> ab = Chan.make();
            Chan<Long> ba = Chan.make();
            Chan<Long> gate = Chan.make();
            java.util.concurrent.atomic.AtomicReference<G> partner = new java.util.concurrent.atomic.AtomicReference<>();
            rt.go(() -> {
                warmPair(ab, ba, gate, () -> {
                    partner.set(Scheduler.getg());
                    ab.recv();
                    wasOnTop.set(onTop());
                    guestLooping.countDown();
                    while (!hostWentOn.get()) {
                        Go.checkpoint();
                    }
                    guestDone.countDown();
                });
                gate.send(0L); // the partner into runnext
                if (byGuest) {
                    // The partner is not waiting in ab: this send parks, the partner runs on
                    // top, takes the value (readying this goroutine) and loops.
                    ab.send(100L);
                } else {
                    // Once the partner waits in ab, this send readies it into runnext, and the
                    // receive parks with it on top, where it loops; a platform thread sends.
                    while (partner.get() == null) {
                        Go.yield();
                    }
                    awaitParked(partner.get());
                    ab.send(100L);
                    ba.recv();
                }
                hostWentOn.set(true);
            });
            assertThat(guestLooping.await(20, TimeUnit.SECONDS)).isTrue();
            if (!byGuest) {
                ba.send(7L); // from this platform thread: readies the host
            }
            assertThat(guestDone.await(20, TimeUnit.SECONDS)).as("the host went on while its guest looped").isTrue();
        }
        return wasOnTop.get();
    }

    /**
     * A host its guest readied, the guest running on: as Go's idle P would take the readied
     * goroutine from runnext after its pause, the spinning M asks the guest to step aside.
     */
    @Test
    void aHostItsGuestReadiedGoesOnWhileTheGuestRunsOn() throws Exception {
        hostGoesOnWhileItsGuestLoopsInOneOfThreeTries("guest");
    }

    /** A host readied by a platform thread while its guest runs on goes on at the guest's next safe point. */
    @Test
    void aHostReadiedByAThirdPartyGoesOnAtItsGuestsNextSafePoint() throws Exception {
        hostGoesOnWhileItsGuestLoopsInOneOfThreeTries("thread");
    }

    private static void hostGoesOnWhileItsGuestLoopsInOneOfThreeTries(String tag) throws Exception {
        boolean onTop = false;
        for (int i = 0; i < 3 && !onTop; i++) {
            onTop = hostGoesOnWhileItsGuestLoops(tag);
        }
        assertThat(onTop).as("the partner ran on top of the parking goroutine in one of three tries").isTrue();
    }

    /**
     * A goroutine inside procPin cannot park: that holds even when the partner in its runnext
     * would ready it, because running the partner on top would take the P from under the pin.
     */
    @Test
    void aPinnedGoroutineDoesNotRunItsPartnerOnTop() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            rt.run(() -> {
                Chan<Long> ab = Chan.make();
                Chan<Long> ba = Chan.make();
                Chan<Long> gate = Chan.make();
                warmPair(ab, ba, gate, () -> ba.send(101L));
                gate.send(0L); // the partner is now in runnext, about to reply on ba
                Go.procPin();
                try {
                    assertThatThrownBy(ba::recv).isInstanceOf(IllegalStateException.class).hasMessageContaining("pinned");
                } finally {
                    Go.procUnpin();
                }
                assertThat(ba.recv()).isEqualTo(101L); // unpinned, it parks and the partner replies
                return null;
            });
        }
    }

    /** Recurses depth frames deep, then runs body; returns depth. */
    private static int recurse(int depth, GoTesting.Body body) throws Exception {
        if (depth == 0) {
            body.run();
            return 0;
        }
        return recurse(depth - 1, body) + 1;
    }

    private static final jdk.internal.vm.ContinuationScope PROBE = new jdk.internal.vm.ContinuationScope("stack-probe");

    /**
     * How deep recurse can go in a continuation that then yields and runs on again (a park and
     * a resume: the JDK's freeze of a deep stack recurses in native code too) on a platform
     * thread of the JVM's stack size: the stack a goroutine alone had on an M before. A binary
     * search, one fresh thread a try, with recurse compiled first, as the pair's will be.
     */
    private static int parkableDepthOfOneThreadStack() throws Exception {
        for (int i = 0; i < 2_000; i++) {
            recurse(200, () -> { });
        }
        int fits = 0;
        int overflows = 1 << 20;
        while (overflows - fits > 16) {
            int d = (fits + overflows) >>> 1;
            AtomicBoolean overflowed = new AtomicBoolean();
            Thread t = new Thread(() -> {
                jdk.internal.vm.Continuation c = new jdk.internal.vm.Continuation(PROBE, () -> {
                    try {
                        recurse(d, () -> jdk.internal.vm.Continuation.yield(PROBE));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                try {
                    c.run();
                    c.run();
                } catch (StackOverflowError e) {
                    overflowed.set(true);
                }
            });
            t.start();
            t.join();
            if (overflowed.get()) {
                overflows = d;
            } else {
                fits = d;
            }
        }
        return fits;
    }

    /**
     * A goroutine on top runs on the rest of its host's thread stack: an M's stack is twice the
     * JVM's thread stack, so a pair whose frames each take 90% of what a goroutine alone could
     * park with on an M before (one thread stack) still passes the turn on top of each other.
     * (With Ms of one thread stack this passed too: the JDK's first, slow freeze of a deep
     * stack recurses in native code and so sets the calibrated budget far below what the
     * frames alone take. The doubling is the margin for a guest whose freeze takes that slow
     * path on top of a deep host; see M.HostStack.)
     */
    @Test
    void aPairOfDeepGoroutinesStillRunsOnTopOfEachOther() throws Exception {
        int depth = parkableDepthOfOneThreadStack() * 9 / 10;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).build())) {
            long before = nested(rt);
            rt.run(() -> {
                Chan<Long> ab = Chan.make();
                Chan<Long> ba = Chan.make();
                Go.go(() -> {
                    try {
                        recurse(depth, () -> {
                            for (int i = 0; i < 100; i++) {
                                ba.send(ab.recv() + 1);
                            }
                        });
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                recurse(depth, () -> {
                    for (long i = 0; i < 100; i++) {
                        ab.send(i);
                        assertThat(ba.recv()).isEqualTo(i + 1);
                    }
                });
                return null;
            });
            assertThat(nested(rt) - before).as("hand-offs run on top, %d frames deep each", depth).isGreaterThan(50);
        }
    }

    /**
     * A timer due on the pair's P is run before the next hand-off, as findRunnable would: with
     * sysmon off nothing else looks at this P's timers while the pair passes the turn on top of
     * each other, so the sleeper below would never wake.
     */
    @Test
    void aDueTimerOnThePairsPIsNotPassedOver() throws Exception {
        long cap = 20_000_000;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().directHandOff(true).gomaxprocs(1).sysmon(false).build())) {
            long trips = rt.run(() -> {
                AtomicBoolean woke = new AtomicBoolean();
                Chan<Boolean> asleep = Chan.make(1);
                Go.go(() -> {
                    asleep.send(true); // buffered: readies main, goes on into the sleep
                    Go.sleep(Duration.ofMillis(20)); // long enough for the pair to warm up and run on top
                    woke.set(true);
                });
                asleep.recv(); // the sleeper's timer is on this P now
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                Go.go(() -> {
                    for (Long v; (v = ping.recv()) != null; ) {
                        pong.send(v + 1);
                    }
                });
                long n = 0;
                while (!woke.get() && n < cap) {
                    ping.send(n);
                    pong.recv();
                    n++;
                }
                ping.close();
                return n;
            });
            assertThat(trips).as("round trips before the sleeper woke").isLessThan(cap);
            assertThat(nested(rt)).as("hand-offs run on top meanwhile").isPositive();
        }
    }
}
