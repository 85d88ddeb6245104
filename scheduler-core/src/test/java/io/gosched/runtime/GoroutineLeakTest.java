package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.sync.Mutex;
import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leaked goroutines (Go 1.26's goroutineleak), found by the garbage collector: Go's
 * runtime/goroutineleakprofile_test.go cases that apply (TestGoroutineLeakProfile: a goroutine
 * blocked on a channel, select, or sync object nobody can reach is reported; one whose channel is
 * still reachable is not).
 */
@Timeout(120)
class GoroutineLeakTest {

    /** Collects until pred holds or about 10 s pass; returns whether it held. */
    private static boolean gcUntil(java.util.function.BooleanSupplier pred) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            System.gc();
            Thread.sleep(20);
            if (pred.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Starts, from a goroutine, one goroutine blocked forever by how, on an object only it can
     * reach; returns its goid once it parked. Its own method, so nothing of it stays in the
     * caller's frame.
     */
    private static long leakOne(GoRuntime rt, Map<String, String> labels, Consumer<Chan<Long>> how) throws Exception {
        return rt.run(() -> {
            Chan<Long> started = Chan.make(1);
            Go.withLabels(labels, () -> Go.go(() -> how.accept(started)));
            long id = started.recv();
            GoTesting.await("parked", () -> rt.goroutines().stream().anyMatch(g -> g.id() == id && g.state().equals("waiting")));
            return id;
        });
    }

    private static void recvForever(Chan<Long> started) {
        Chan<Integer> ch = Chan.make();
        started.send(Go.goid());
        ch.recv();
    }

    private static void sendForever(Chan<Long> started) {
        Chan<Integer> ch = Chan.make();
        started.send(Go.goid());
        ch.send(1);
    }

    private static void selectForever(Chan<Long> started) {
        Chan<Integer> a = Chan.make();
        Chan<Integer> b = Chan.make(1);
        b.send(0); // full: the send case blocks too
        started.send(Go.goid());
        Select.select(Select.recv(a), Select.send(b, 1));
    }

    private static void lockForever(Chan<Long> started) {
        Mutex mu = new Mutex();
        mu.lock();
        started.send(Go.goid());
        mu.lock();
    }

    private static void waitForever(Chan<Long> started) {
        WaitGroup wg = new WaitGroup();
        wg.add(1);
        started.send(Go.goid());
        wg.await();
    }

    private static List<Long> leakedIds(GoRuntime rt) {
        return rt.leakedGoroutines().stream().map(GoroutineInfo::id).toList();
    }

    /** Go: TestGoroutineLeakProfile — every kind of forever-blocked goroutine on an unreachable object. */
    @Test
    void TestGoroutineLeakProfile() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            record Case(String reason, Consumer<Chan<Long>> how) { }
            List<Case> cases = List.of(new Case("chan receive", GoroutineLeakTest::recvForever),
                    new Case("chan send", GoroutineLeakTest::sendForever),
                    new Case("select", GoroutineLeakTest::selectForever),
                    new Case("sync.Mutex.Lock", GoroutineLeakTest::lockForever),
                    new Case("sync.WaitGroup.Wait", GoroutineLeakTest::waitForever));
            Map<Long, String> want = new java.util.HashMap<>();
            for (Case c : cases) {
                want.put(leakOne(rt, Map.of("case", c.reason()), c.how()), c.reason());
            }
            long liveBefore = rt.stats().goroutines();
            assertTrue(gcUntil(() -> leakedIds(rt).containsAll(want.keySet())),
                    "leaked " + rt.leakedGoroutines() + ", want " + want + "\n" + rt.dumpGoroutines());
            for (GoroutineInfo g : rt.leakedGoroutines()) {
                assertEquals(want.get(g.id()), g.waitReason(), "wait reason of " + g.id());
                assertEquals(Map.of("case", g.waitReason()), g.labels());
                assertEquals(GoroutineLeakTest.class.getName(), g.createdAt().getClassName());
                assertThat(g.parentId()).isPositive();
            }
            assertEquals(cases.size(), rt.leakedGoroutinesTotal());
            assertEquals(cases.size(), rt.stats().leakedGoroutines(), "gosched_goroutines_leaked_total reads this");
            assertThat(rt.goroutines()).as("a leaked goroutine is gone from the dump").noneMatch(g -> want.containsKey(g.id()));
            assertThat(rt.stats().goroutines()).as("and from the count").isLessThanOrEqualTo(liveBefore - cases.size());
        }
    }

    /**
     * A leak is found with the runtime idle afterwards: the leaked goroutine went through a run
     * queue (kicked out of runnext by later go calls, maybe stolen by the other P), and no P
     * touched its queue since. A stale run-queue slot must not keep it reachable.
     */
    @Test
    void aLeakIsFoundWhenTheRuntimeGoesIdleAfterIt() throws Exception {
        for (int round = 0; round < 10 * GoTesting.STRESS; round++) {
            try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
                AtomicLong leaked = new AtomicLong();
                Chan<Integer> release = Chan.make();
                rt.run(() -> {
                    startLeaker(leaked);
                    for (int i = 0; i < 3; i++) {
                        Go.go(() -> release.recv()); // reachable: the test holds release
                    }
                    return null;
                });
                GoTesting.await("leaker parked", () -> leaked.get() != 0 && rt.goroutines().stream()
                        .anyMatch(g -> g.id() == leaked.get() && g.state().equals("waiting")));
                Thread.sleep(50); // every M idle
                boolean found = gcUntil(() -> leakedIds(rt).contains(leaked.get()));
                if (!found) {
                    System.err.println("WHERE: " + where(rt, leaked.get()));
                }
                assertTrue(found, "round " + round + ": not found: " + rt.dumpGoroutines());
                release.close();
            }
        }
    }

    static String where(GoRuntime rt, long goid) throws Exception {
        G target = null;
        for (G g : rt.sched().allgs.snapshot()) {
            if (g.goid == goid) {
                target = g;
            }
        }
        StringBuilder sb = new StringBuilder();
        Sched s = rt.sched();
        java.lang.reflect.Field ringF = RunQueue.class.getDeclaredField("ring");
        ringF.setAccessible(true);
        for (P p : s.allp) {
            G[] ring = (G[]) ringF.get(p.runq);
            for (int i = 0; i < ring.length; i++) {
                if (ring[i] == target) {
                    sb.append("P").append(p.id).append(" ring[").append(i).append("] ");
                }
            }
            if (p.runq.peekNext() == target) {
                sb.append("P").append(p.id).append(" runnext ");
            }
            if (p.sysmonPreemptG == target) {
                sb.append("P").append(p.id).append(" sysmonPreemptG ");
            }
        }
        for (M m : s.allm) {
            if (m.curg() == target || m.lockedg == target) {
                sb.append("M curg/lockedg ");
            }
        }
        for (G g : s.allgs.snapshot()) {
            if (g.schedlink == target) {
                sb.append("schedlink of ").append(g.goid).append(' ');
            }
            if (g.param == target || g.parkArg == target) {
                sb.append("param/parkArg of ").append(g.goid).append(' ');
            }
        }
        return sb.append("status=").append(target == null ? "gone" : G.statusName(target.status())).toString();
    }

    private static void startLeaker(AtomicLong id) {
        Chan<Integer> a = Chan.make();
        Chan<Integer> b = Chan.make();
        Go.go(() -> {
            id.set(Go.goid());
            Select.select(Select.recv(a), Select.send(b, 1));
        });
    }

    /**
     * A goroutine blocked on a channel a platform thread still holds is never reported, however
     * many collections run; once the thread sends, it finishes.
     */
    @Test
    void aWaiterOnAChannelAThreadHoldsIsNotReported() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Integer> ch = Chan.make();
            CountDownLatch go = new CountDownLatch(1);
            CountDownLatch finished = new CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> {
                Chan<Integer> mine = ch; // this thread's stack is what holds the channel
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                mine.send(1);
            });
            AtomicLong id = new AtomicLong();
            rt.go(() -> {
                id.set(Go.goid());
                ch.recv();
                finished.countDown();
            });
            GoTesting.await("parked", () -> rt.goroutines().stream().anyMatch(g -> g.id() == id.get() && g.state().equals("waiting")));
            // A leak of another goroutine proves collections ran and were seen.
            long leaked = leakOne(rt, Map.of(), GoroutineLeakTest::recvForever);
            assertTrue(gcUntil(() -> leakedIds(rt).contains(leaked)), "the control leak was not found");
            for (int i = 0; i < 5; i++) {
                System.gc();
            }
            assertThat(leakedIds(rt)).doesNotContain(id.get());
            assertThat(rt.goroutines()).anyMatch(g -> g.id() == id.get() && g.waitReason().equals("chan receive"));
            go.countDown();
            assertTrue(finished.await(10, TimeUnit.SECONDS), "the waiter was woken");
            holder.join();
            assertEquals(List.of(leaked), leakedIds(rt));
        }
    }

    /** Sleeping goroutines and goroutines blocked on a channel a live goroutine holds are not leaks. */
    @Test
    void sleepersAndWaitersOnALiveGoroutinesChannelAreNotReported() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Integer> stop = Chan.make();
            rt.run(() -> {
                Chan<Integer> work = Chan.make();
                Go.go(() -> work.recv());                         // reachable: the holder below has it
                Go.go(() -> Go.sleep(Duration.ofSeconds(30)));    // the timer heap holds it
                Go.go(() -> {                                     // holds work, parked on stop
                    stop.recv();
                    work.send(1);
                });
                return null;
            });
            long leaked = leakOne(rt, Map.of(), GoroutineLeakTest::recvForever);
            assertTrue(gcUntil(() -> leakedIds(rt).contains(leaked)), "the control leak was not found");
            System.gc();
            assertEquals(List.of(leaked), leakedIds(rt));
            stop.send(1);
            rt.shutdown(Duration.ofMillis(200));
        }
    }
}
