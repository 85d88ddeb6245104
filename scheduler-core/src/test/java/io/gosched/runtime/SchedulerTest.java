package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Behaviour of the G/M/P scheduler, with ports of Go's proc_test.go where one exists. */
@Timeout(120)
class SchedulerTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    @Test
    void runReturnsMainsValueAndRethrowsItsException() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            assertEquals(42, rt.run(() -> 42));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> rt.run(() -> { throw new IllegalArgumentException("boom"); }));
            assertEquals("boom", e.getMessage());
            assertTrue(rt.run(Go::inGoroutine));
            assertThat(Go.inGoroutine()).isFalse();
        }
    }

    @Test
    void oneMillionGoroutinesFromInsideAllRun() throws Exception {
        int n = 1_000_000;
        try (GoRuntime rt = runtime(2)) {
            AtomicLong sum = new AtomicLong();
            CountDownLatch done = new CountDownLatch(n);
            rt.run(() -> {
                for (int i = 0; i < n; i++) {
                    int v = i;
                    Go.go(() -> {
                        sum.addAndGet(v);
                        done.countDown();
                    });
                }
                return null;
            });
            assertTrue(done.await(60, TimeUnit.SECONDS), "not all goroutines ran: " + done.getCount() + " left");
            assertEquals((long) n * (n - 1) / 2, sum.get());
            assertThat(rt.stats().spawned()).isGreaterThanOrEqualTo(n);
        }
    }

    @Test
    void goroutinesFromPlatformThreadsAllRun() throws Exception {
        int threads = 4;
        int perThread = 100_000;
        try (GoRuntime rt = runtime(2)) {
            CountDownLatch done = new CountDownLatch(threads * perThread);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ts.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < perThread; i++) {
                        rt.go(done::countDown);
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertTrue(done.await(60, TimeUnit.SECONDS), done.getCount() + " goroutines never ran");
        }
    }

    @Test
    void parallelismReachesButNeverExceedsGomaxprocs() throws Exception {
        int procs = 2;
        try (GoRuntime rt = runtime(procs)) {
            AtomicInteger running = new AtomicInteger();
            AtomicInteger max = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(64);
            for (int i = 0; i < 64; i++) {
                rt.go(() -> {
                    // Counted as running only between safe points: at a safe point it may be
                    // preempted and another goroutine take its P.
                    for (int segment = 0; segment < 20; segment++) {
                        int now = running.incrementAndGet();
                        max.accumulateAndGet(now, Math::max);
                        long end = System.nanoTime() + 100_000;
                        while (System.nanoTime() < end) {
                            Thread.onSpinWait();
                        }
                        running.decrementAndGet();
                        Go.checkpoint();
                    }
                    done.countDown();
                });
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertEquals(procs, max.get(), "max simultaneous goroutines");
        }
    }

    /**
     * Go: TestGoroutineParallelism — P goroutines must all run at once, passing a counter
     * round-robin. Each spins (no safe point, no yield) until it is its turn, so the chain only
     * completes when the others run on other Ps at the same time. A goroutine that is told to give
     * up (the chain stalled) counts itself stuck and stops, so the test fails instead of hanging and
     * leaves no spinning goroutine behind.
     */
    @Test
    void goroutineParallelism() throws Exception {
        int procs = 2;
        try (GoRuntime rt = runtime(procs)) {
            for (int attempt = 0; attempt < 3; attempt++) {
                AtomicInteger x = new AtomicInteger();
                AtomicInteger stuck = new AtomicInteger();
                java.util.concurrent.atomic.AtomicBoolean giveUp = new java.util.concurrent.atomic.AtomicBoolean();
                int n = 50;
                CountDownLatch done = new CountDownLatch(procs);
                for (int p = 0; p < procs; p++) {
                    int me = p;
                    rt.go(() -> {
                        try {
                            for (int i = 0; i < n; i++) {
                                int expected = procs * i + me;
                                while (x.get() != expected) {
                                    if (giveUp.get()) {
                                        stuck.incrementAndGet();
                                        return;
                                    }
                                    Thread.onSpinWait();
                                }
                                x.incrementAndGet();
                            }
                        } finally {
                            done.countDown();
                        }
                    });
                }
                boolean finished;
                try {
                    finished = done.await(60, TimeUnit.SECONDS);
                } finally {
                    giveUp.set(true);
                }
                assertTrue(done.await(60, TimeUnit.SECONDS), "the goroutines stopped");
                assertEquals(0, stuck.get(), "goroutines stuck waiting for their turn: they did not run in parallel");
                assertTrue(finished, "the round-robin did not complete");
                assertEquals(procs * n, x.get(), "every turn was taken");
            }
        }
    }

    /**
     * Go: TestYieldProgress — a goroutine spinning on Gosched lets another one on the same P run,
     * and is itself run again. On one P: main yields, so the child (in runnext) runs and spins on
     * yield; main runs again between the child's yields, sets the flag, and yields until the child
     * has seen it. The loops are bounded by counts, so a yield that lets nobody run fails here.
     */
    @Test
    void yieldProgress() throws Exception {
        int bound = 1_000_000;
        try (GoRuntime rt = runtime(1)) {
            AtomicInteger childYields = new AtomicInteger();
            AtomicInteger seen = new AtomicInteger();
            AtomicInteger mainYieldsAfterFlag = new AtomicInteger();
            rt.run(() -> {
                AtomicInteger flag = new AtomicInteger();
                Go.go(() -> {
                    while (flag.get() == 0 && childYields.get() < bound) {
                        childYields.incrementAndGet();
                        Go.yield();
                    }
                    seen.set(flag.get());
                });
                Go.yield();
                flag.set(1);
                while (seen.get() == 0 && mainYieldsAfterFlag.get() < bound) {
                    mainYieldsAfterFlag.incrementAndGet();
                    Go.yield();
                }
                return null;
            });
            assertThat(childYields.get()).as("the child ran while main yielded").isPositive();
            assertThat(seen.get()).as("the spinning child ran again and saw the flag main set between its yields").isEqualTo(1);
            assertThat(mainYieldsAfterFlag.get()).as("main's yields let the child run").isLessThan(bound);
        }
    }

    @Test
    void idlePSteals() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            Set<String> threads = ConcurrentHashMap.newKeySet();
            CountDownLatch done = new CountDownLatch(200);
            rt.run(() -> {
                // All children land on this P's queue; only stealing lets the other M run them.
                // They keep the P busy until a steal happened (20 s at most), not for a fixed
                // 40 ms: on a loaded 2-core machine the idle P's M can be off CPU that long.
                long giveUp = System.nanoTime() + 20_000_000_000L;
                for (int i = 0; i < 200; i++) {
                    Go.go(() -> {
                        threads.add(Thread.currentThread().getName());
                        do {
                            long end = System.nanoTime() + 200_000;
                            while (System.nanoTime() < end) {
                                Go.checkpoint();
                            }
                        } while (rt.stats().steals() == 0 && System.nanoTime() < giveUp);
                        done.countDown();
                    });
                }
                return null;
            });
            assertTrue(done.await(60, TimeUnit.SECONDS));
            assertThat(rt.stats().steals()).isPositive();
            assertThat(rt.stats().stolenGoroutines()).isGreaterThanOrEqualTo(rt.stats().steals());
            assertThat(threads).hasSizeGreaterThanOrEqualTo(2);
        }
    }

    /** A parked goroutine readied from a platform thread while every M sleeps must wake (no lost wake-up). */
    @Test
    void noLostWakeupFromPlatformThreads() throws Exception {
        int rounds = 10_000 * STRESS;
        try (GoRuntime rt = runtime(2)) {
            for (int i = 0; i < rounds; i++) {
                CountDownLatch ran = new CountDownLatch(1);
                rt.go(ran::countDown);
                assertTrue(ran.await(10, TimeUnit.SECONDS), "lost wake-up in round " + i);
            }
        }
    }

    @Test
    void parkAndReadyRoundTrip() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            AtomicReference<G> parked = new AtomicReference<>();
            CountDownLatch resumed = new CountDownLatch(1);
            rt.go(() -> {
                Scheduler.gopark((gp, arg) -> {
                    parked.set(gp);
                    return true;
                }, null, WaitReason.FOREVER);
                resumed.countDown();
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (parked.get() == null && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(parked.get()).isNotNull();
            assertEquals(G.WAITING, parked.get().status());
            assertThat(resumed.getCount()).isEqualTo(1);
            Scheduler.goready(parked.get());
            assertTrue(resumed.await(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void parkCancelledByCommitResumesAtOnce() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            assertEquals("resumed", rt.run(() -> {
                Scheduler.gopark((gp, arg) -> false, null, WaitReason.FOREVER);
                return "resumed";
            }));
        }
    }

    /** A ping-pong pair on one P hands the CPU over through runnext without the global queue. */
    @Test
    void pingPongOnOnePRunsThroughRunnext() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            int rounds = 10_000;
            rt.run(() -> {
                AtomicReference<G> a = new AtomicReference<>();
                AtomicReference<G> b = new AtomicReference<>();
                AtomicInteger count = new AtomicInteger();
                // b parks; a readies b then parks; b readies a then parks, ...
                CountDownLatch done = new CountDownLatch(1);
                Go.go(() -> {
                    b.set(Scheduler.getg());
                    for (int i = 0; i < rounds; i++) {
                        Scheduler.gopark((gp, x) -> true, null, WaitReason.FOREVER);
                        count.incrementAndGet();
                        Scheduler.goready(a.get());
                    }
                });
                Go.yield(); // let b park
                a.set(Scheduler.getg());
                for (int i = 0; i < rounds; i++) {
                    while (b.get() == null || b.get().status() != G.WAITING) {
                        Go.yield();
                    }
                    Scheduler.goready(b.get());
                    Scheduler.gopark((gp, x) -> true, null, WaitReason.FOREVER);
                }
                assertEquals(rounds, count.get());
                return null;
            });
            // Every hand-off went through runnext: the global queue saw only the few yields.
            assertThat(rt.stats().schedules()).isGreaterThanOrEqualTo(2L * rounds);
        }
    }

    /**
     * On two Ps the idle P's M backs off a ping-pong pair's runnext (RunQueue.grab: the owner
     * refilled it during the thief's pause). A G then left in the busy P's runnext, behind a
     * goroutine that computes without a safe point, is still taken by that M after its pause, as
     * Go's runqgrab takes it after usleep(3): it runs long before sysmon would lend a spare P for
     * the computing goroutine (two quanta). A thief whose pause grew without bound (tried, see
     * bench/results/NOTES.md) left it to that spare P.
     *
     * <p>On a machine whose other work keeps the thief's thread off the CPU for two quanta, sysmon
     * rightly lends the spare P (CI saw it once in a run next to a Maven build), so the scenario
     * gets three tries and passes on the first without a lend. A runtime whose Ms never take a
     * busy P's runnext fails it at the first try (seen: the G never ran).
     */
    @Test
    void aGLeftInABusyPsRunnextIsStolenOnceThePairThatKeptItFullStops() throws Exception {
        List<String> tries = new ArrayList<>();
        for (int attempt = 1; attempt <= 3; attempt++) {
            long lent = runnextLeftBehindAComputingG();
            tries.add("try " + attempt + ": " + lent + " spare P(s) lent");
            if (lent == 0) {
                return;
            }
        }
        fail("the G in runnext waited for sysmon's spare P instead of being stolen, in every try: " + tries);
    }

    /** One run of the scenario above; returns how many spare Ps sysmon lent meanwhile. */
    private long runnextLeftBehindAComputingG() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            SchedStats before = rt.stats();
            boolean ran = rt.run(() -> {
                Chan<Boolean> wake = Chan.make();
                AtomicBoolean woken = new AtomicBoolean();
                Go.go(() -> {
                    wake.recv();
                    woken.set(true);
                });
                Chan<Long> ping = Chan.make();
                Chan<Long> pong = Chan.make();
                int rounds = 200_000;
                Go.go(() -> {
                    for (int i = 0; i < rounds; i++) {
                        pong.send(ping.recv() + 1);
                    }
                });
                for (long i = 0; i < rounds; i++) {
                    ping.send(i);
                    pong.recv();
                }
                wake.send(true); // the receiver parked long ago: it goes to this P's runnext
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!woken.get() && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // no safe point: only a thief (or a spare P) runs it
                }
                return woken.get();
            });
            SchedStats after = rt.stats();
            assertTrue(ran, "the G in runnext ran while its P's goroutine computed");
            return after.handoffsByCause().preempt() - before.handoffsByCause().preempt();
        }
    }

    @Test
    void gomaxprocsUpAndDownWhileGoroutinesRun() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            AtomicLong work = new AtomicLong();
            AtomicInteger stop = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(8);
            for (int i = 0; i < 8; i++) {
                rt.go(() -> {
                    while (stop.get() == 0) {
                        work.incrementAndGet();
                        Go.yield();
                    }
                    done.countDown();
                });
            }
            int[] sizes = {4, 1, 3, 2, 1, 4, 2};
            int prev = 2;
            for (int n : sizes) {
                assertEquals(prev, rt.gomaxprocs(n));
                assertEquals(n, rt.gomaxprocs());
                assertEquals(n, rt.stats().localRunqueues().length);
                long before = work.get();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (work.get() < before + 100 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(work.get()).as("progress after gomaxprocs(%d)", n).isGreaterThanOrEqualTo(before + 100);
                prev = n;
            }
            assertEquals(prev, rt.run(() -> rt.gomaxprocs(3)));
            stop.set(1);
            assertTrue(done.await(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void uncaughtExceptionGoesToHandlerAndRuntimeLives() throws Exception {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        CountDownLatch handled = new CountDownLatch(1);
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1)
                .onUncaughtException((thread, t) -> {
                    seen.set(t);
                    handled.countDown();
                }).build())) {
            rt.go(() -> { throw new IllegalStateException("dies"); });
            assertTrue(handled.await(10, TimeUnit.SECONDS));
            assertEquals("dies", seen.get().getMessage());
            assertEquals(7, rt.run(() -> 7));
        }
    }

    @Test
    void shutdownLeavesNoThreadBehind() throws Exception {
        GoRuntime rt = runtime(2);
        CountDownLatch done = new CountDownLatch(1000);
        for (int i = 0; i < 1000; i++) {
            rt.go(done::countDown);
        }
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(rt.shutdown(Duration.ofSeconds(10)), "shutdown was not clean");
        assertThat(rt.stats().threads()).isZero();
        assertThat(Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gosched-m-") && t.isAlive()
                        && t.getThreadGroup() != null && t.getThreadGroup().getName().startsWith(rt.config().name())))
                .isEmpty();
        assertThrows(java.util.concurrent.RejectedExecutionException.class, () -> rt.go(() -> { }));
    }

    @Test
    void syscallLetsOtherGoroutinesRunOnTheSameP() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            AtomicInteger progress = new AtomicInteger();
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
            rt.go(() -> {
                progress.incrementAndGet();
                ran.countDown();
            });
            assertTrue(ran.await(10, TimeUnit.SECONDS), "the only P stayed with the goroutine in a syscall");
            release.countDown();
            assertThat(rt.stats().handoffsByCause().syscall()).isPositive();
        }
    }

    @Test
    void goOutsideAGoroutineIsRejectedWithAClearMessage() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Go.go(() -> { }));
        assertThat(e.getMessage()).contains("outside a goroutine");
        assertThrows(NullPointerException.class, () -> {
            try (GoRuntime rt = runtime(1)) {
                rt.go(null);
            }
        });
    }

    /**
     * After a goroutine resumes on another M, the runtime must still know which goroutine is
     * running: JIT-compiled code may reuse a Thread.currentThread() read from before the yield
     * (see "The current thread" in M). Loops long enough to be compiled by C2. SafeJvmTest runs
     * the same loop in a JVM without SafeJvm.OPTIONS.
     */
    @Test
    void currentGoroutineIsRightAfterMigrating() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            AtomicLong wrong = new AtomicLong();
            int gs = 4;
            int iters = 300_000 * STRESS;
            CountDownLatch done = new CountDownLatch(gs);
            for (int g = 0; g < gs; g++) {
                rt.go(() -> {
                    long me = Go.goid();
                    for (int i = 0; i < iters; i++) {
                        Go.yield();
                        if (Go.goid() != me) {
                            wrong.incrementAndGet();
                        }
                    }
                    done.countDown();
                });
            }
            assertTrue(done.await(120, TimeUnit.SECONDS), "goroutines did not finish");
            assertEquals(0, wrong.get(), "Go.goid() named another goroutine after a migration");
        }
    }
}
