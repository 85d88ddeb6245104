package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GoRuntime.goroutines and dumpGoroutines: Go's runtime.Stack(all) and traceback text. Go's tests
 * that apply are ported under their names (runtime/stack_test.go TestStack*, traceback_test.go
 * TestTracebackSystem).
 */
@Timeout(60)
class GoroutinesTest {

    /** A named frame the dump must show. */
    static void parkedInRecv(Chan<Integer> ch) {
        ch.recv();
    }

    private static Optional<GoroutineInfo> find(GoRuntime rt, long id) {
        return rt.goroutines().stream().filter(g -> g.id() == id).findFirst();
    }

    private static GoroutineInfo awaitWaiting(GoRuntime rt, long id, String reason) {
        GoTesting.await("goroutine " + id + " waiting in " + reason,
                () -> find(rt, id).map(g -> g.state().equals("waiting") && g.waitReason().equals(reason)).orElse(false));
        return find(rt, id).orElseThrow();
    }

    /** The floor of the issue: a goroutine parked in recv shows its frames and its labels. */
    @Test
    void dumpShowsAGoroutineParkedInRecvWithItsFramesAndLabels() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Integer> ch = Chan.make();
                AtomicLong child = new AtomicLong();
                long self = Go.goid();
                Go.withLabels(Map.of("job", "42", "template", "fan-out"), () -> Go.go(() -> {
                    child.set(Go.goid());
                    parkedInRecv(ch);
                }));
                GoTesting.await("child started", () -> child.get() != 0);
                GoroutineInfo g = awaitWaiting(rt, child.get(), "chan receive");

                assertEquals(Map.of("job", "42", "template", "fan-out"), g.labels());
                assertEquals(self, g.parentId());
                assertThat(g.stack()).as("its own frames").anySatisfy(f -> {
                    assertEquals(GoroutinesTest.class.getName(), f.getClassName());
                    assertEquals("parkedInRecv", f.getMethodName());
                });
                assertThat(g.stack()).as("down to its body, not the M's scheduler frames")
                        .noneMatch(f -> f.getMethodName().equals("schedule") || f.getClassName().equals(M.class.getName()));
                assertNotNull(g.createdAt());
                assertEquals(GoroutinesTest.class.getName(), g.createdAt().getClassName());
                assertEquals("GoroutinesTest.java", g.createdAt().getFileName());

                String dump = rt.dumpGoroutines();
                assertThat(dump).contains("goroutine " + child.get() + " [chan receive labels:{\"job\":\"42\", \"template\":\"fan-out\"}]:\n"
                        + GoroutinesTest.class.getName() + ".parkedInRecv(...)\n\tGoroutinesTest.java:");
                assertThat(dump).contains("created by " + GoroutinesTest.class.getName() + ".");
                assertThat(dump).contains(" in goroutine " + self + "\n\tGoroutinesTest.java:" + g.createdAt().getLineNumber() + "\n");
                assertThat(dump).as("the main goroutine itself").contains("goroutine " + self + " [running]:");
                ch.send(1);
                return null;
            });
        }
    }

    /**
     * A select that stands for one operation (a receive or a sleep that a context can also end)
     * shows the reason its caller gives, in goroutine info and in the dump; a bare select shows
     * "select"; a reason that is not Go's is refused.
     */
    @Test
    void aSelectShowsTheWaitReasonItsCallerGives() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Integer> ch = Chan.make();
                Chan<Integer> done = Chan.make();
                AtomicLong sleeper = new AtomicLong();
                AtomicLong plain = new AtomicLong();
                Go.go(() -> {
                    sleeper.set(Go.goid());
                    Select.select("sleep", Select.recv(ch), Select.recv(done));
                });
                Go.go(() -> {
                    plain.set(Go.goid());
                    Select.select(Select.recv(ch), Select.recv(done));
                });
                GoTesting.await("both started", () -> sleeper.get() != 0 && plain.get() != 0);
                awaitWaiting(rt, sleeper.get(), "sleep");
                awaitWaiting(rt, plain.get(), "select");
                assertThat(rt.dumpGoroutines()).contains("goroutine " + sleeper.get() + " [sleep]:");
                done.close();
                return null;
            });
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Select.select("napping", Select.recv(Chan.<Integer>make())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("napping");
    }

    /** Go: TestStack — a goroutine sees itself running in the dump. */
    @Test
    void TestStack() throws Exception {
        GoTesting.runGo(1, () -> {
            GoroutineInfo me = find(Go.runtime(), Go.goid()).orElseThrow();
            assertEquals("running", me.state());
            assertEquals("", me.waitReason());
            assertEquals(Duration.ZERO, me.waitingFor());
            assertThat(me.stack()).as("a mounted goroutine is not walked from outside").isEmpty();
        });
    }

    /**
     * Go: TestTracebackSystem — GOTRACEBACK=system shows runtime frames; the default hides them.
     * GoroutineInfo.stack is the system view (gopark, Chan.recv), the dump the default one.
     */
    @Test
    void TestTracebackSystem() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            rt.run(() -> {
                Chan<Integer> ch = Chan.make();
                AtomicLong child = new AtomicLong();
                Go.go(() -> {
                    child.set(Go.goid());
                    parkedInRecv(ch);
                });
                GoTesting.await("child started", () -> child.get() != 0);
                GoroutineInfo g = awaitWaiting(rt, child.get(), "chan receive");
                assertThat(g.stack()).anyMatch(f -> f.getClassName().equals(Chan.class.getName()) && f.getMethodName().equals("recv"));
                assertThat(g.stack()).noneMatch(f -> f.getClassName().startsWith("jdk.internal.vm."));
                String text = Traceback.dump(List.of(g));
                assertThat(text).doesNotContain(Chan.class.getName()).doesNotContain(Scheduler.class.getName())
                        .contains(".parkedInRecv(...)");
                ch.send(1);
                return null;
            });
        }
    }

    /** Go: TestStackAllOutput-like — every goroutine, each state, with Go's names. */
    @Test
    void everyGoroutineIsListedWithGosStateNamesAndWaitReasons() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Integer> a = Chan.make();
                Chan<Integer> c = Chan.make();
                Chan<Integer> d = Chan.make();
                io.gosched.sync.Mutex mu = new io.gosched.sync.Mutex();
                mu.lock();
                long[] ids = new long[4];
                Chan<Long> started = Chan.make(4);
                Go.go(() -> {
                    started.send(Go.goid());
                    a.send(1);
                });
                Go.go(() -> {
                    started.send(Go.goid());
                    Select.select(Select.recv(c), Select.recv(d));
                });
                Go.go(() -> {
                    started.send(Go.goid());
                    Go.sleep(Duration.ofMinutes(5));
                });
                Go.go(() -> {
                    started.send(Go.goid());
                    mu.lock();
                    mu.unlock();
                });
                for (int i = 0; i < 4; i++) {
                    ids[i] = started.recv();
                }
                Map<String, Long> byReason = new java.util.HashMap<>();
                GoTesting.await("four parked goroutines", () -> {
                    byReason.clear();
                    for (GoroutineInfo g : rt.goroutines()) {
                        if (g.state().equals("waiting")) {
                            byReason.put(g.waitReason(), g.id());
                        }
                    }
                    return byReason.keySet().containsAll(List.of("chan send", "select", "sleep", "sync.Mutex.Lock"));
                });
                assertThat(byReason.values()).containsAll(List.of(ids[0], ids[1], ids[2], ids[3]));
                mu.unlock();
                a.recv();
                c.close();
                return null;
            });
            rt.shutdown(Duration.ofMillis(100)); // the sleeper is abandoned
        }
    }

    /** waitingFor grows with the wait (sysmon's clock), and stays zero for running goroutines. */
    @Test
    void waitingForGrowsWhileParked() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            rt.run(() -> {
                Chan<Integer> ch = Chan.make();
                AtomicLong child = new AtomicLong();
                Go.go(() -> {
                    child.set(Go.goid());
                    ch.recv();
                });
                GoTesting.await("child started", () -> child.get() != 0);
                awaitWaiting(rt, child.get(), "chan receive");
                Go.sleep(Duration.ofMillis(300));
                GoroutineInfo g = find(rt, child.get()).orElseThrow();
                assertTrue(g.waitingFor().toMillis() >= 250, "waited " + g.waitingFor());
                assertTrue(g.waitingFor().toMillis() < 30_000, "waited " + g.waitingFor());
                ch.send(1);
                return null;
            });
        }
    }

    static final class Named implements Runnable {
        @Override
        public void run() {
        }
    }

    /** createdAt is the go call's frame: a named class's per call site, a lambda's cached per lambda. */
    @Test
    void createdAtIsTheFrameOfTheGoCall() {
        Named named = new Named();
        StackTraceElement a = Traceback.creationFrame(named);
        StackTraceElement b = Traceback.creationFrame(named);
        assertEquals("createdAtIsTheFrameOfTheGoCall", a.getMethodName());
        assertEquals(a.getLineNumber() + 1, b.getLineNumber(), "two call sites of one named class: two frames");
        Runnable lambda = () -> { };
        StackTraceElement c = Traceback.creationFrame(lambda);
        assertTrue(c == Traceback.creationFrame(lambda), "a lambda's frame is cached");
    }

    /** The header format, Go's: minutes only from one minute on, always "minutes". */
    @Test
    void headerShowsMinutesAsGoDoes() {
        GoroutineInfo g = new GoroutineInfo(7, "waiting", "chan receive", Duration.ofSeconds(150), Map.of(), List.of(), 1,
                new StackTraceElement("com.example.Main", "main", "Main.java", 12));
        assertEquals("goroutine 7 [chan receive, 2 minutes]:\ncreated by com.example.Main.main in goroutine 1\n\tMain.java:12\n",
                Traceback.dump(List.of(g)));
        GoroutineInfo r = new GoroutineInfo(8, "runnable", "", Duration.ZERO, Map.of(), List.of(), 0, null);
        assertEquals("goroutine 8 [runnable]:\n", Traceback.dump(List.of(r)));
    }

    /** A waker that comes while a snapshot walks the frames waits for it; nothing is lost. */
    @Test
    void snapshotsDuringPingPongLoseNoWakeUp() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.run(() -> {
                Chan<Integer> ping = Chan.make();
                Chan<Integer> pong = Chan.make();
                int rounds = 20_000 * GoTesting.STRESS;
                Go.go(() -> {
                    for (int i = 0; i < rounds; i++) {
                        pong.send(ping.recv() + 1);
                    }
                });
                try (SnapshotsInALoop dumper = new SnapshotsInALoop(rt)) {
                    for (int i = 0; i < rounds; i++) {
                        ping.send(i);
                        assertEquals(i + 1, pong.recv());
                    }
                }
                return null;
            });
        }
    }

    /**
     * A goroutine that yields leaves RUNNING for RUNNABLE with a plain store (G.yieldedToRunnable):
     * snapshots walking the goroutines meanwhile neither lose a yield nor find a scan bit cleared
     * under them.
     */
    @Test
    void snapshotsDuringGoschedsLoseNoYield() throws Exception {
        int goroutines = 4;
        int rounds = 20_000 * GoTesting.STRESS;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            long yields = rt.run(() -> {
                Chan<Integer> done = Chan.make(goroutines);
                long total = 0;
                try (SnapshotsInALoop dumper = new SnapshotsInALoop(rt)) {
                    for (int g = 0; g < goroutines; g++) {
                        Go.go(() -> {
                            int n = 0;
                            for (int i = 0; i < rounds; i++) {
                                Go.yield();
                                n++;
                            }
                            done.send(n);
                        });
                    }
                    for (int g = 0; g < goroutines; g++) {
                        total += done.recv();
                    }
                }
                return total;
            });
            assertEquals((long) goroutines * rounds, yields);
        }
    }

    /**
     * A platform thread taking goroutine snapshots of rt in a loop until closed; close fails the
     * test with the snapshot's own exception if one threw.
     */
    private static final class SnapshotsInALoop implements AutoCloseable {
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;

        SnapshotsInALoop(GoRuntime rt) {
            thread = Thread.ofPlatform().start(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        rt.goroutines();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join();
            assertNull(failure.get(), () -> "a snapshot failed: " + failure.get());
        }
    }
}
