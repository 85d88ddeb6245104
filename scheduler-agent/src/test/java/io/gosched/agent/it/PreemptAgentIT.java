package io.gosched.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.agent.PreemptAgent;
import io.gosched.agent.it.cold.ColdHog;
import io.gosched.agent.it.hot.Hog;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedStats;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Trace;
import io.gosched.sync.WaitGroup;
import io.gosched.time.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The packaged agent attached to this JVM ({@code -javaagent:scheduler-agent.jar=io.gosched.agent.it.hot},
 * see the module's pom): loops of {@code hot} are preempted at the quantum, the same loop in
 * {@code cold} is untouched and still needs sysmon's spare P. Assertions are on counts and
 * ratios (the machine is shared), never on wall-clock limits.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a hog that is never preempted fails instead of hanging
class PreemptAgentIT {

    static final Duration QUANTUM = SchedulerConfig.defaults().preemptQuantum();

    static GoRuntime start(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    @Test
    void onlyTheNamedPackageIsInstrumented() {
        assertThat(PreemptAgent.installed()).as("run with the agent attached (failsafe's argLine)").isTrue();
        // Load both twins.
        assertThat(Hog.class.getName()).isNotNull();
        assertThat(ColdHog.class.getName()).isNotNull();
        assertThat(PreemptAgent.instrumentedClasses())
                .contains(Hog.class.getName())
                .doesNotContain(ColdHog.class.getName(), PreemptAgentIT.class.getName(), GoRuntime.class.getName());
    }

    /** Sets st.stop after millis, from a platform thread (a goroutine might never get to run). */
    static void stopAfter(Hog.Stop st, long millis) {
        Thread.ofPlatform().daemon(true).start(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            st.stop = true;
        });
    }

    /**
     * What a traced run saw: its result, the goroutines that were hogs, and the goroutine each
     * spare P was lent for. sysmon lends a spare P for whichever goroutine keeps its P two
     * quanta without yielding; a goroutine in JDK code that cannot yield (a class being
     * defined, a thread being started) is rightly lent one too, so the tests name the hogs and
     * assert about the lends for them, and a failure says which goroutine every lend was for.
     */
    record Traced<T>(T value, Set<Long> hogs, List<Long> lentFor) {
        /** Lends for a hog, or for a goroutine the trace could not name (-1). */
        List<Long> hogLends() {
            return lentFor.stream().filter(g -> g == -1 || hogs.contains(g)).toList();
        }

        String describe() {
            return "spare Ps lent for goroutines " + lentFor + "; the hogs are " + hogs;
        }
    }

    /** Runs main on rt with a trace recording; main adds the hogs' goids to the set it is given. */
    static <T> Traced<T> traced(GoRuntime rt, Function<Set<Long>, Callable<T>> main) throws Exception {
        Set<Long> hogs = ConcurrentHashMap.newKeySet();
        Trace.Recording rec = rt.trace().start(1 << 16);
        T value;
        List<Trace.Event> events;
        try {
            value = rt.run(main.apply(hogs));
        } finally {
            events = rec.stop();
        }
        return new Traced<>(value, Set.copyOf(hogs), lentFor(events));
    }

    /**
     * For each spare P lent (a ProcHandoff event with argument 1, recorded by sysmon for the P it
     * lent for), the goroutine that last started on that P before it: the one sysmon found
     * holding the P. -1 when the recording has no such start.
     */
    static List<Long> lentFor(List<Trace.Event> events) {
        List<Long> out = new ArrayList<>();
        for (Trace.Event lend : events) {
            if (lend.kind() != Trace.Kind.PROC_HANDOFF || lend.arg() != 1) {
                continue;
            }
            Trace.Event last = null;
            for (Trace.Event e : events) {
                if (e.kind() == Trace.Kind.GO_START && e.p() == lend.p() && e.tsNanos() <= lend.tsNanos()
                        && (last == null || e.tsNanos() >= last.tsNanos())) {
                    last = e;
                }
            }
            out.add(last == null ? -1L : last.goid());
        }
        return out;
    }

    /** What one hog-plus-ticker run saw. */
    record Run(long ticks, long hogIterations, long elapsedNanos, SchedStats before, SchedStats after, Traced<long[]> traced) {
        long preemptions() {
            return after.preemptions() - before.preemptions();
        }

        long quanta() {
            return elapsedNanos / QUANTUM.toNanos();
        }
    }

    /**
     * What a goroutine does for the first time in a JVM runs JDK code without safe points, much
     * of it under native frames where no goroutine can yield: loading and instrumenting a class
     * ({@code defineClass}), linking a lambda's call site and spinning the method handles behind
     * it, starting a platform thread ({@code Thread.start0}). Stretched by a loaded machine, such
     * a first time kept the main goroutine on the P for two quanta, and sysmon rightly lent a
     * spare P for it (this IT's stacks at the lend: the main goroutine in the class-file API, in
     * {@code LambdaForm.compileToBytecode}, in {@code Thread.start0}). The tests ignore lends for
     * the main goroutine, but some first times happen in a hog itself: its first call of
     * {@code Hog.spin} loads and instruments {@code Hog}, and a lend then would count against
     * it. So each scenario runs once here first, briefly, on a runtime of its own.
     */
    @BeforeAll
    static void everyFirstTimeHappensBeforeTheTests() throws Exception {
        hogAndTicker(true, 50);
        hogAndTicker(false, 50);
        try (GoRuntime rt = start(1)) {
            twoHogs(rt, 50);
            handFlagsByPreemption(rt, 1);
        }
    }

    /**
     * GOMAXPROCS 1: a hog without safe points next to a goroutine receiving a 1 ms ticker, for
     * about a second (the hog is told to stop by a platform thread).
     */
    static Run hogAndTicker(boolean instrumented) throws Exception {
        return hogAndTicker(instrumented, 1000);
    }

    static Run hogAndTicker(boolean instrumented, long millis) throws Exception {
        try (GoRuntime rt = start(1)) {
            SchedStats before = rt.stats();
            Traced<long[]> traced = traced(rt, hogs -> () -> {
                Hog.Stop st = new Hog.Stop();
                AtomicLong iterations = new AtomicLong();
                WaitGroup wg = new WaitGroup();
                Ticker ticker = Ticker.newTicker(Duration.ofMillis(1));
                long t0 = System.nanoTime();
                wg.add(1);
                Go.go(() -> {
                    hogs.add(Go.goid());
                    iterations.set(instrumented ? Hog.spin(st) : ColdHog.spin(st));
                    wg.done();
                });
                stopAfter(st, millis);
                long ticks = 0;
                while (!st.stop) {
                    ticker.c().recv();
                    ticks++;
                }
                ticker.stop();
                wg.await();
                return new long[] {ticks, iterations.get(), System.nanoTime() - t0};
            });
            long[] out = traced.value();
            return new Run(out[0], out[1], out[2], before, rt.stats(), traced);
        }
    }

    /**
     * The agent's point: on one P, a loop without safe points is preempted about every quantum
     * (no spare P needed), and the goroutine next to it keeps being scheduled.
     */
    @Test
    void aTightLoopIsPreemptedAtTheQuantum() throws Exception {
        Run r = hogAndTicker(true);
        assertThat(r.hogIterations()).as("the hog ran").isPositive();
        assertThat(r.preemptions()).as("preemptions in %d quanta", r.quanta()).isGreaterThanOrEqualTo(r.quanta() / 4);
        assertThat(r.ticks()).as("ticks received in %d quanta", r.quanta()).isGreaterThanOrEqualTo(r.quanta() / 4);
        assertThat(r.traced().hogLends()).as("the hog yielded each time, no spare P was needed for it: %s", r.traced().describe()).isEmpty();
    }

    /** The same loop in an unnamed package is left as it was: only sysmon's spare P keeps the ticker going. */
    @Test
    void anUninstrumentedLoopStillNeedsTheSpareP() throws Exception {
        Run r = hogAndTicker(false);
        assertThat(r.hogIterations()).isPositive();
        assertThat(r.traced().hogLends()).as("spare Ps lent for the uninstrumented hog: %s", r.traced().describe()).isNotEmpty();
        assertThat(r.ticks()).as("ticks received in %d quanta", r.quanta()).isGreaterThanOrEqualTo(r.quanta() / 4);
    }

    /**
     * Go: TestPreemption. Two goroutines on one P hand a flag back and forth N times, each spinning
     * (with a function call per turn) until it is its turn: every hand-over needs a preemption.
     */
    @Test
    void testPreemption() throws Exception {
        int n = 5;
        try (GoRuntime rt = start(1)) {
            SchedStats before = rt.stats();
            Traced<Void> t = handFlagsByPreemption(rt, n);
            SchedStats after = rt.stats();
            assertThat(after.preemptions() - before.preemptions()).as("preemptions").isGreaterThanOrEqualTo(n);
            assertThat(t.hogLends()).as("spare Ps lent for the spinners: %s", t.describe()).isEmpty();
        }
    }

    /** testPreemption's body: two goroutines on rt hand a flag back and forth n times. */
    static Traced<Void> handFlagsByPreemption(GoRuntime rt, int n) throws Exception {
        return traced(rt, hogs -> () -> {
            AtomicInteger x = new AtomicInteger();
            WaitGroup wg = new WaitGroup();
            wg.add(2);
            for (int g = 0; g < 2; g++) {
                int me = g;
                Go.go(() -> {
                    hogs.add(Go.goid());
                    for (int i = 0; i < n; i++) {
                        Hog.spinUntil(x, me);
                        x.set(1 - me);
                    }
                    wg.done();
                });
            }
            wg.await();
            return null;
        });
    }

    /**
     * Go: TestPreemptionGC, with a gomaxprocs change as the stop-the-world. P goroutines spin
     * (calling a function) while the main goroutine stops the world N times; without the
     * agent's checks the first stop would wait for the spinners forever.
     */
    @Test
    void testPreemptionGC() throws Exception {
        int p = 2;
        int n = 5;
        try (GoRuntime rt = start(p + 1)) {
            rt.run(() -> {
                AtomicInteger stop = new AtomicInteger();
                WaitGroup wg = new WaitGroup();
                wg.add(p);
                for (int i = 0; i < p; i++) {
                    Go.go(() -> {
                        Hog.spinUntil(stop, 1);
                        wg.done();
                    });
                }
                for (int i = 0; i < n; i++) {
                    Go.yield();
                    rt.gomaxprocs(i % 2 == 0 ? p + 2 : p + 1); // a stop-the-world each
                }
                stop.set(1);
                wg.await();
                return null;
            });
        }
    }

    /** Two instrumented hogs on one P share it: neither runs much more than the other. */
    @Test
    void twoHogsShareOneP() throws Exception {
        try (GoRuntime rt = start(1)) {
            Traced<long[]> t = twoHogs(rt, 1000);
            long[] iters = t.value();
            double ratio = (double) Math.max(iters[0], iters[1]) / Math.max(1, Math.min(iters[0], iters[1]));
            assertThat(ratio).as("iterations %d vs %d", iters[0], iters[1]).isLessThan(4.0);
            assertThat(t.hogLends()).as("spare Ps lent for the hogs: %s", t.describe()).isEmpty();
        }
    }

    /** Two instrumented hogs on rt for about millis; the iterations each made. */
    static Traced<long[]> twoHogs(GoRuntime rt, long millis) throws Exception {
        return traced(rt, hogs -> () -> {
            Hog.Stop st = new Hog.Stop();
            long[] it = new long[2];
            WaitGroup wg = new WaitGroup();
            wg.add(2);
            for (int h = 0; h < 2; h++) {
                int me = h;
                Go.go(() -> {
                    hogs.add(Go.goid());
                    it[me] = Hog.spin(st);
                    wg.done();
                });
            }
            stopAfter(st, millis);
            wg.await();
            return it;
        });
    }
}
