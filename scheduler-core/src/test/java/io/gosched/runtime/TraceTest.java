package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TraceTest {

    @Test
    void recordsRunsParksUnparksAndStealsPerP() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Trace.Recording rec = rt.trace().start(100_000);
            try {
                assertThrows(IllegalStateException.class, () -> rt.trace().start(10), "one recording at a time");
                CountDownLatch done = new CountDownLatch(200);
                rt.run(() -> {
                    Chan<Integer> c = Chan.make();
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        c.recv();
                    }
                    // Skewed: every child starts on this P; the other P must steal. The children
                    // keep this P busy until a steal happened (or 20 s passed): on a loaded
                    // 2-core machine the other P's M can be off CPU for the 20 ms a fixed
                    // amount of work would last, and then nobody needs to steal. A steal seen
                    // in the stats has its event recorded already (stealWork records, then
                    // counts), and the stolen goroutine's GoStart precedes its countDown.
                    long giveUp = System.nanoTime() + 20_000_000_000L;
                    for (int i = 0; i < 200; i++) {
                        Go.go(() -> {
                            do {
                                long end = System.nanoTime() + 100_000;
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
                // Their GoEnd events too: a goroutine ends after its countDown.
                long quietBy = System.nanoTime() + 10_000_000_000L;
                while (rt.stats().goroutines() > 0 && System.nanoTime() < quietBy) {
                    Thread.sleep(1);
                }
            } finally {
                rec.stop();
            }
            List<Trace.Event> events = rec.stop();
            assertThat(rt.trace().isRecording()).isFalse();
            var kinds = events.stream().collect(Collectors.groupingBy(Trace.Event::kind, Collectors.counting()));
            SchedStats stats = rt.stats();
            assertThat(kinds).as("events by kind; steals counted %d (%d goroutines), dropped %d, events by P %s, Ps %s",
                            stats.steals(), stats.stolenGoroutines(), rec.dropped(),
                            events.stream().collect(Collectors.groupingBy(Trace.Event::p, Collectors.counting())), stats.procs())
                    .containsKeys(Trace.Kind.GO_CREATE, Trace.Kind.GO_START, Trace.Kind.GO_END, Trace.Kind.GO_PARK,
                    Trace.Kind.GO_UNPARK, Trace.Kind.STEAL);
            assertThat(events.stream().filter(e -> e.kind() == Trace.Kind.GO_START).map(Trace.Event::p).distinct())
                    .as("runs on both Ps").containsExactlyInAnyOrder(0, 1);
            for (int i = 1; i < events.size(); i++) {
                assertThat(events.get(i).tsNanos()).isGreaterThanOrEqualTo(events.get(i - 1).tsNanos());
            }
            assertThat(rec.dropped()).isZero();
        }
    }

    /** A trace is the runtime's: two runtimes in one JVM record at once, each only its own goroutines. */
    @Test
    void twoRuntimesRecordAtOnceEachItsOwnGoroutines() throws Exception {
        try (GoRuntime a = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
                GoRuntime b = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            Trace.Recording ra = a.trace().start(10_000);
            Trace.Recording rb = b.trace().start(10_000);
            assertThat(a.trace()).isNotSameAs(b.trace());
            a.run(() -> spawnEmpty(30));
            b.run(() -> spawnEmpty(7));
            List<Trace.Event> ea = ra.stop();
            List<Trace.Event> eb = rb.stop();
            assertThat(ea.stream().filter(e -> e.kind() == Trace.Kind.GO_CREATE)).as("a's main and its 30").hasSize(31);
            assertThat(eb.stream().filter(e -> e.kind() == Trace.Kind.GO_CREATE)).as("b's main and its 7").hasSize(8);
        }
    }

    private static Void spawnEmpty(int n) {
        for (int i = 0; i < n; i++) {
            Go.go(() -> { });
        }
        return null;
    }

    /** A goroutine that spins 2 ms, creates A, spins 2 ms, creates B, spins 2 ms, then parks. */
    private static List<Trace.Event> spinCreateSpin(Trace.Timestamps timestamps) throws Exception {
        // No sysmon: the 6 ms run stays one run (no preemption request on a slow machine).
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).sysmon(false).build())) {
            Trace.Recording rec = rt.trace().start(10_000, timestamps);
            assertThat(rec.timestamps()).isEqualTo(timestamps);
            try {
                rt.run(() -> {
                    Chan<Integer> done = Chan.make(2);
                    spin(2_000_000);
                    Go.go(() -> done.send(1));
                    spin(2_000_000);
                    Go.go(() -> done.send(2));
                    spin(2_000_000);
                    done.recv();
                    done.recv();
                    return null;
                });
            } finally {
                rec.stop();
            }
            return rec.stop();
        }
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait(); // no checkpoint: the run must not be cut
        }
    }

    /** The parent's first run: its GoStart and the event that ended it. */
    private static Trace.Event[] firstRunOf(long goid, List<Trace.Event> events) {
        Trace.Event start = events.stream().filter(e -> e.goid() == goid && e.kind() == Trace.Kind.GO_START)
                .findFirst().orElseThrow();
        Trace.Event end = events.stream().filter(e -> e.goid() == goid && e.tsNanos() >= start.tsNanos()
                && (e.kind() == Trace.Kind.GO_PARK || e.kind() == Trace.Kind.GO_END)).findFirst().orElseThrow();
        return new Trace.Event[] {start, end};
    }

    @Test
    void interpolatedEventsLieInsideTheRunThatEmittedThemInTheirOrder() throws Exception {
        List<Trace.Event> events = spinCreateSpin(Trace.Timestamps.INTERPOLATED);
        List<Trace.Event> creates = events.stream().filter(e -> e.kind() == Trace.Kind.GO_CREATE && e.p() == 0).toList();
        assertThat(creates).hasSize(2).allMatch(Trace.Event::interpolated);
        long parent = creates.get(0).arg();
        Trace.Event[] run = firstRunOf(parent, events);
        assertThat(run[0].interpolated()).isFalse();
        assertThat(run[1].interpolated()).isFalse();
        assertThat(run[1].tsNanos() - run[0].tsNanos()).as("run slices keep exact times").isGreaterThanOrEqualTo(6_000_000);
        assertThat(creates.get(0).tsNanos()).isGreaterThan(run[0].tsNanos()).isLessThan(creates.get(1).tsNanos());
        assertThat(creates.get(1).tsNanos()).isLessThan(run[1].tsNanos());
        assertThat(creates.get(0).goid()).as("creation order kept").isLessThan(creates.get(1).goid());
        assertThat(events.stream().filter(e -> e.kind() == Trace.Kind.GO_START || e.kind() == Trace.Kind.GO_PARK
                || e.kind() == Trace.Kind.GO_END)).noneMatch(Trace.Event::interpolated);
    }

    @Test
    void exactTimestampsPutInRunEventsWhereTheyHappened() throws Exception {
        List<Trace.Event> events = spinCreateSpin(Trace.Timestamps.EXACT);
        assertThat(events).noneMatch(Trace.Event::interpolated);
        List<Trace.Event> creates = events.stream().filter(e -> e.kind() == Trace.Kind.GO_CREATE && e.p() == 0).toList();
        assertThat(creates).hasSize(2);
        Trace.Event[] run = firstRunOf(creates.get(0).arg(), events);
        assertThat(creates.get(0).tsNanos() - run[0].tsNanos()).isGreaterThanOrEqualTo(2_000_000);
        assertThat(creates.get(1).tsNanos() - creates.get(0).tsNanos()).isGreaterThanOrEqualTo(2_000_000);
        assertThat(run[1].tsNanos() - creates.get(1).tsNanos()).isGreaterThanOrEqualTo(2_000_000);
    }

    @Test
    void aCreationThatIsItsPsFirstEventIsInterpolatedToo() throws Exception {
        // No sysmon: a preemption request would end the run (GoPreempt) before the creation.
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).sysmon(false).build())) {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finished = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicBoolean create = new java.util.concurrent.atomic.AtomicBoolean();
            rt.go(() -> {
                running.countDown();
                while (!create.get()) {
                    Thread.onSpinWait(); // still the same run when the recording starts
                }
                Chan<Integer> done = Chan.make(1);
                Go.go(() -> done.send(1));
                done.recv();
                finished.countDown();
            });
            assertTrue(running.await(10, TimeUnit.SECONDS));
            Trace.Recording rec = rt.trace().start(1000);
            List<Trace.Event> events;
            try {
                create.set(true);
                assertTrue(finished.await(10, TimeUnit.SECONDS));
            } finally {
                events = rec.stop();
            }
            List<Trace.Event> onP = events.stream().filter(e -> e.p() == 0).toList();
            assertThat(onP.getFirst().kind()).isEqualTo(Trace.Kind.GO_CREATE);
            assertThat(onP.getFirst().interpolated()).as("no clock read, even for the ring's first event").isTrue();
            Trace.Event next = onP.stream().filter(e -> !e.interpolated()).findFirst().orElseThrow();
            assertThat(onP.getFirst().tsNanos()).as("nothing clocked before it: its successor's time")
                    .isEqualTo(next.tsNanos());
        }
    }

    @Test
    void recordingsStartedAndStoppedUnderLoadStayConsistent() throws Exception {
        java.util.Queue<Throwable> uncaught = new java.util.concurrent.ConcurrentLinkedQueue<>();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(4)
                .onUncaughtException((thread, e) -> uncaught.add(e)).build())) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            CountDownLatch workersDone = new CountDownLatch(3);
            for (int w = 0; w < 3; w++) {
                rt.go(() -> {
                    Chan<Integer> c = Chan.make();
                    Go.go(() -> {
                        for (;;) {
                            if (c.recv() < 0) {
                                return;
                            }
                        }
                    });
                    for (int i = 0; !stop.get(); i++) {
                        c.send(i);
                        if (i % 64 == 0) {
                            Go.go(Go::yield); // creations, runs that yield, steals by idle Ps
                        }
                    }
                    c.send(-1);
                    workersDone.countDown();
                });
            }
            java.util.Random random = new java.util.Random(42);
            long recorded = 0;
            try {
                // 40 rounds; on a starved machine (the workers' Ms not run by the OS within a few
                // ms windows) more, until some round has seen events: the checks need events to check.
                for (int round = 0; round < 40 || (recorded == 0 && round < 4_000); round++) {
                    Trace.Timestamps mode = Trace.Timestamps.values()[random.nextInt(2)];
                    long before = System.nanoTime();
                    Trace.Recording rec = rt.trace().start(1 + random.nextInt(4096), mode);
                    Thread.sleep(1 + random.nextInt(5));
                    List<Trace.Event> events = rec.stop();
                    long bound = System.nanoTime() - before; // no event can lie past the stop
                    assertThat(rt.trace().isRecording()).isFalse();
                    recorded += events.size();
                    for (int i = 0; i < events.size(); i++) {
                        Trace.Event e = events.get(i);
                        assertThat(e.tsNanos()).as("round %d, %s", round, e).isBetween(0L, bound);
                        if (i > 0) {
                            assertThat(e.tsNanos()).isGreaterThanOrEqualTo(events.get(i - 1).tsNanos());
                        }
                        if (mode == Trace.Timestamps.EXACT) {
                            assertThat(e.interpolated()).as("round %d exact: %s", round, e).isFalse();
                        }
                    }
                }
            } finally {
                stop.set(true);
            }
            assertThat(recorded).as("events over all rounds").isPositive();
            assertTrue(workersDone.await(30, TimeUnit.SECONDS));
        }
        assertThat(uncaught).isEmpty();
    }

    /** Writes clocked (ts >= 0) and untimed (ts < 0) GoUnpark events to a ring, returns the export. */
    private static List<Trace.Event> export(int capacity, long stopTs, long... times) {
        Trace.Ring ring = new Trace.Ring(null, 0, capacity);
        for (int i = 0; i < times.length; i++) {
            ring.put(times[i] < 0 ? Trace.UNTIMED : times[i], i, Trace.K_GO_UNPARK, 0);
        }
        List<Trace.Event> out = new java.util.ArrayList<>();
        ring.copyTo(out, stopTs);
        return out;
    }

    @Test
    void untimedEventsAreSpreadEvenlyBetweenTheirClockedNeighbours() {
        assertThat(export(16, 1000, 100, -1, -1, 400, -1, 600)).extracting(Trace.Event::tsNanos)
                .containsExactly(100L, 200L, 300L, 400L, 500L, 600L);
        assertThat(export(16, 1000, 100, -1, -1, 400)).extracting(Trace.Event::interpolated)
                .containsExactly(false, true, true, false);
        assertThat(export(16, 300, 100, -1)).as("after the last clocked event: before the stop")
                .extracting(Trace.Event::tsNanos).containsExactly(100L, 200L);
        assertThat(export(3, 1000, 100, -1, -1, 400)).as("the clocked one before them was overwritten")
                .extracting(Trace.Event::tsNanos).containsExactly(400L, 400L, 400L);
        assertThat(export(16, 1000, -1, -1)).as("nothing clocked at all").extracting(Trace.Event::tsNanos)
                .containsExactly(1000L, 1000L);
        assertThat(export(16, 1000, 100, -1, -1, 400)).extracting(Trace.Event::goid).as("ring order kept")
                .containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void ringsKeepTheNewestAndCountWhatTheyDropped() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            Trace.Recording rec = rt.trace().start(8);
            rt.run(() -> {
                for (int i = 0; i < 100; i++) {
                    Go.yield();
                }
                return null;
            });
            List<Trace.Event> events = rec.stop();
            assertThat(rec.dropped()).isPositive();
            assertThat(events.size()).isLessThanOrEqualTo(8 * 2 + 8);
            assertThrows(IllegalArgumentException.class, () -> rt.trace().start(0));
            assertThrows(NullPointerException.class, () -> rt.trace().start(8, null));
        }
    }

    /**
     * The wire names are a contract (trace files, the trace endpoints, docs/telemetry.md); the
     * codes are what the rings store. Both must map back to the same kind.
     */
    @Test
    void everyKindRoundTripsThroughItsWireNameAndItsRingCode() {
        assertThat(java.util.Arrays.stream(Trace.Kind.values()).map(Trace.Kind::wireName)).containsExactly(
                "GoCreate", "GoStart", "GoEnd", "GoPark", "GoUnpark", "GoPreempt", "GoSched", "GoSysCall",
                "GoSysExit", "Steal", "ProcHandoff");
        for (Trace.Kind k : Trace.Kind.values()) {
            assertThat(Trace.Kind.ofWireName(k.wireName())).isSameAs(k);
            assertThat(Trace.Kind.ofCode(k.code())).isSameAs(k);
            assertThat(k).hasToString(k.wireName());
        }
        // The emission points store these literals: each must decode to the kind it names.
        int[] codes = {Trace.K_GO_CREATE, Trace.K_GO_START, Trace.K_GO_END, Trace.K_GO_PARK, Trace.K_GO_UNPARK,
            Trace.K_GO_PREEMPT, Trace.K_GO_SCHED, Trace.K_GO_SYSCALL, Trace.K_GO_SYSEXIT, Trace.K_STEAL, Trace.K_PROC_HANDOFF};
        assertThat(java.util.Arrays.stream(codes).mapToObj(Trace.Kind::ofCode)).containsExactly(Trace.Kind.values());
        assertThat(Trace.K_COUNT).isEqualTo(Trace.Kind.values().length);
        assertThrows(IllegalArgumentException.class, () -> Trace.Kind.ofCode(Trace.K_COUNT));
        assertThrows(IllegalArgumentException.class, () -> Trace.Kind.ofCode(-1));
        assertThrows(IllegalArgumentException.class, () -> Trace.Kind.ofWireName("GO_START"));
    }

    @Test
    void everyKindCodeWrittenToARingOrTheFlightRecorderIsReadBackAsItsKind() {
        Trace.Kind[] kinds = Trace.Kind.values();
        Trace.Ring ring = new Trace.Ring(null, 0, kinds.length);
        FlightRecorder flight = new FlightRecorder(new Trace(), java.time.Duration.ofMinutes(1), 64);
        try {
            for (Trace.Kind k : kinds) {
                ring.put(10L * (k.code() + 1), 100 + k.code(), k.code(), -k.code());
                flight.putShared(k.code(), 100 + k.code(), k.code(), -k.code());
            }
            List<Trace.Event> fromRing = new java.util.ArrayList<>();
            ring.copyTo(fromRing, 1_000);
            List<Trace.Event> fromFlight = flight.snapshot().events();
            for (List<Trace.Event> events : List.of(fromRing, fromFlight)) {
                assertThat(events).extracting(Trace.Event::kind).containsExactly(kinds);
                assertThat(events).allSatisfy(e -> {
                    assertThat(e.goid()).isEqualTo(100 + e.kind().code());
                    assertThat(e.arg()).isEqualTo(-e.kind().code());
                });
            }
        } finally {
            flight.close();
        }
    }
}
