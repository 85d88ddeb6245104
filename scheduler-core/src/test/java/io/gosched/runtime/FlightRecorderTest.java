package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A runtime's flight recorder: the last window of events, always on, snapshot at any time. */
@Timeout(60)
class FlightRecorderTest {

    /** Spawns n goroutines that each yield once; returns their goids. */
    static Set<Long> spawn(GoRuntime rt, int n) throws Exception {
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        rt.run(() -> {
            WaitGroup wg = new WaitGroup();
            for (int i = 0; i < n; i++) {
                wg.go(() -> {
                    ids.add(Go.goid());
                    Go.yield();
                });
            }
            wg.await();
            return null;
        });
        return ids;
    }

    @Test
    void snapshotHoldsTheLastWindowAndNothingOlder() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
                FlightRecorder f = rt.trace().flightRecorder(Duration.ofMillis(300))) {
            Set<Long> old = spawn(rt, 2_000);
            FlightRecorder.Snapshot early = f.snapshot();
            assertThat(goids(early)).containsAll(old); // the recorder saw them while they were recent
            Thread.sleep(700); // more than the window
            Set<Long> recent = spawn(rt, 2_000);
            FlightRecorder.Snapshot s = f.snapshot();
            assertThat(s.toNanos() - s.fromNanos()).isEqualTo(Duration.ofMillis(300).toNanos());
            Set<Long> seen = goids(s);
            assertThat(seen).containsAll(recent);
            assertThat(seen).doesNotContainAnyElementsOf(old);
            assertThat(s.events()).allSatisfy(e -> assertThat(e.tsNanos()).isBetween(s.fromNanos(), s.toNanos()));
            assertThat(s.events()).extracting(Trace.Event::tsNanos).isSorted();
            assertTrue(s.complete());
            // Each recent goroutine's life is there in order: created, started, ended. Another P
            // may steal it between its creation and its start (a Steal event of its own).
            long g = recent.iterator().next();
            List<Trace.Kind> kinds = s.events().stream().filter(e -> e.goid() == g).map(Trace.Event::kind)
                    .filter(k -> k != Trace.Kind.STEAL).toList();
            assertThat(kinds).startsWith(Trace.Kind.GO_CREATE, Trace.Kind.GO_START).endsWith(Trace.Kind.GO_END);
        }
    }

    @Test
    void eventsFromEveryP() throws Exception {
        int procs = 4;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
                FlightRecorder f = rt.trace().flightRecorder(Duration.ofSeconds(5))) {
            Set<Integer> ps = Set.of();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (ps.size() < procs && System.nanoTime() < deadline) {
                rt.run(() -> {
                    WaitGroup wg = new WaitGroup();
                    for (int i = 0; i < procs * 4; i++) {
                        wg.go(() -> { // busy long enough for the idle Ps to steal the others
                            long until = System.nanoTime() + 2_000_000;
                            while (System.nanoTime() < until) {
                                Go.checkpoint();
                            }
                        });
                    }
                    wg.await();
                    return null;
                });
                ps = f.snapshot().events().stream().map(Trace.Event::p).filter(p -> p >= 0).collect(Collectors.toSet());
            }
            assertThat(ps).containsExactlyInAnyOrder(0, 1, 2, 3);
        }
    }

    @Test
    void aSmallBudgetKeepsTheNewestAndSaysTheWindowIsIncomplete() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
                FlightRecorder f = rt.trace().flightRecorder(Duration.ofSeconds(30), FlightRecorder.CHUNK_EVENTS * 2)) {
            spawn(rt, 20_000); // 3 events each, all on P 0: ten times the budget
            Set<Long> last = spawn(rt, 100);
            FlightRecorder.Snapshot s = f.snapshot();
            assertFalse(s.complete());
            long onP0 = s.events().stream().filter(e -> e.p() == 0).count();
            assertThat(onP0).isLessThanOrEqualTo(f.maxEventsPerP()).isGreaterThan(FlightRecorder.CHUNK_EVENTS);
            assertThat(goids(s)).containsAll(last);
        }
    }

    @Test
    void switchesOnTheFastPathAreClockedOneInEightAndPlacedInOrder() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
                FlightRecorder f = rt.trace().flightRecorder(Duration.ofSeconds(10))) {
            rt.run(() -> {
                Chan<Integer> ping = Chan.make();
                Chan<Integer> pong = Chan.make();
                Go.go(() -> {
                    for (int i = 0; i < 5_000; i++) {
                        pong.send(ping.recv());
                    }
                });
                for (int i = 0; i < 5_000; i++) {
                    ping.send(i);
                    pong.recv();
                }
                return null;
            });
            List<Trace.Event> events = f.snapshot().events().stream().filter(e -> e.p() == 0).toList();
            long parks = events.stream().filter(e -> e.kind() == Trace.Kind.GO_PARK).count();
            long clockedParks = events.stream().filter(e -> e.kind() == Trace.Kind.GO_PARK && !e.interpolated()).count();
            assertThat(parks).isGreaterThan(5_000);
            // Most switches read no clock; some do (one in CLOCK_PERIOD, and every slow-path one).
            assertThat(clockedParks).isPositive().isLessThan(parks / 2);
            // A P's events keep their order: each goroutine alternates start and park/end.
            Map<Long, Trace.Kind> lastKind = new HashMap<>();
            for (Trace.Event e : events) {
                Trace.Kind prev = lastKind.put(e.goid(), e.kind());
                if (e.kind() == Trace.Kind.GO_START) {
                    assertThat(prev).isNotEqualTo(Trace.Kind.GO_START);
                }
            }
        }
    }

    @Test
    void runsAlongsideARecording() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
                FlightRecorder f = rt.trace().flightRecorder(Duration.ofSeconds(10))) {
            Trace.Recording r = rt.trace().start(65_536);
            Set<Long> ids = spawn(rt, 500);
            List<Trace.Event> recorded = r.stop();
            assertThat(recorded.stream().map(Trace.Event::goid).collect(Collectors.toSet())).containsAll(ids);
            assertThat(goids(f.snapshot())).containsAll(ids);
            assertTrue(f.isActive());
            assertTrue(rt.trace().on, "stopping the recording switched the flight recorder off");
            f.close();
            assertFalse(rt.trace().on);
        }
    }

    @Test
    void oneAtATimePerRuntimeAndValidated() {
        GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
        GoRuntime other = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());
        try {
            oneAtATimeAndValidated(rt, other);
        } finally {
            rt.close();
            other.close();
        }
    }

    private static void oneAtATimeAndValidated(GoRuntime rt, GoRuntime other) {
        assertThrows(IllegalArgumentException.class, () -> rt.trace().flightRecorder(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> rt.trace().flightRecorder(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> rt.trace().flightRecorder(Duration.ofMinutes(11)));
        assertThrows(IllegalArgumentException.class, () -> rt.trace().flightRecorder(Duration.ofSeconds(1), 0));
        assertThrows(NullPointerException.class, () -> rt.trace().flightRecorder(null));
        FlightRecorder f = rt.trace().flightRecorder(Duration.ofSeconds(1));
        assertThrows(IllegalStateException.class, () -> rt.trace().flightRecorder(Duration.ofSeconds(1)));
        f.close();
        f.close();
        assertFalse(f.isActive());
        FlightRecorder again = rt.trace().flightRecorder(Duration.ofSeconds(1));
        FlightRecorder theirs = other.trace().flightRecorder(Duration.ofSeconds(1));
        assertThat(other.trace().activeFlightRecorder()).as("another runtime has its own").isSameAs(theirs);
        assertThat(rt.trace().activeFlightRecorder()).isSameAs(again);
        again.close();
        assertThat(other.trace().activeFlightRecorder()).as("closing one leaves the other's running").isSameAs(theirs);
        theirs.close();
    }

    private static Set<Long> goids(FlightRecorder.Snapshot s) {
        return s.events().stream().map(Trace.Event::goid).collect(Collectors.toSet());
    }
}
