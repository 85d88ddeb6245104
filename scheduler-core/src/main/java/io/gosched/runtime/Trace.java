package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Records one runtime's scheduler events (goroutine runs, parks, unparks, steals, preemptions,
 * syscalls, hand-offs) for a trace viewer, like Go's runtime/trace at a much smaller scale. Each
 * {@link GoRuntime} has its own ({@link GoRuntime#trace()}): a recording holds the events of that
 * runtime's Ps and nothing of another runtime in the same JVM.
 *
 * <p>Off by default and nearly free when off: every emission point is
 * {@code if (trace.on) trace.record(...)}, one read of a field of the runtime's Trace. When on,
 * each P writes its own ring (single writer: the M holding the P), so recording adds no shared
 * contended state; events from threads without a P go to one shared ring under a lock. Rings keep
 * the newest events; {@link Recording#dropped()} counts the overwritten ones.
 *
 * <p>Departure from Go: Go stamps every event with {@code cputicks} (RDTSC, a few ns). The JVM's
 * cheapest monotonic clock is {@code System.nanoTime()}, 25 ns or more here, which would be most
 * of a traced goroutine switch. So by default ({@link Timestamps#INTERPOLATED}) the clock is read
 * once per switch and events between switches are placed on export; {@link Timestamps#EXACT}
 * reads it for every event.
 *
 * Go: runtime/trace.go (the idea; the format here is a flat event list)
 */
public final class Trace {

    /**
     * One event. {@code p} is -1 for events outside any P; {@code goid} -1 when no goroutine
     * applies. {@code interpolated} is true when the event did not read the clock and
     * {@code tsNanos} was placed between the clocked events around it on the same P (see
     * {@link Timestamps#INTERPOLATED}).
     */
    public record Event(long tsNanos, int p, long goid, Kind kind, long arg, boolean interpolated) {
    }

    /**
     * What an event records. The rings store {@link #code()} (the ordinal, a small int) and a
     * reader decodes it with {@link #ofCode}, so recording never touches an enum constant; the
     * wire name ({@link #wireName()}, Go's trace event names) is what a trace file, the trace
     * endpoints and docs/telemetry.md spell. The kind-specific meaning of {@code p}, {@code goid}
     * and {@code arg} is on each constant.
     */
    public enum Kind {
        /** G created (newproc). p: the creating P, -1 from a platform thread; arg: parent goid, -1 from outside. */
        GO_CREATE("GoCreate", K_GO_CREATE),
        /** G starts running on P. arg unused. */
        GO_START("GoStart", K_GO_START),
        /** G's body returned (goexit). */
        GO_END("GoEnd", K_GO_END),
        /** G parked (gopark). arg: wait-reason ordinal, -1 for none. */
        GO_PARK("GoPark", K_GO_PARK),
        /** G made runnable (goready). p: the readying P, -1 when none; arg: goid of the readier, -1 from outside. */
        GO_UNPARK("GoUnpark", K_GO_UNPARK),
        /** G gave up its P at a safe point (arg 0) or lost it by hand-off after ignoring a request (arg 1). */
        GO_PREEMPT("GoPreempt", K_GO_PREEMPT),
        /** G yielded (Go.yield, runtime.Gosched). */
        GO_SCHED("GoSched", K_GO_SCHED),
        /** G entered Go.syscall (entersyscall). */
        GO_SYSCALL("GoSysCall", K_GO_SYSCALL),
        /**
         * G left the syscall (exitsyscall). p: the P it runs on again, -1 when it found none and
         * queued itself (it then gets a {@link #GO_START} later); arg: 0 when it got its own P
         * back, 1 otherwise.
         */
        GO_SYSEXIT("GoSysExit", K_GO_SYSEXIT),
        /** P stole from another P (runqsteal). goid: first stolen G; arg: {@code victimP << 32 | count}. */
        STEAL("Steal", K_STEAL),
        /**
         * A P given to another M by sysmon (recorded from sysmon, so on the shared ring). p: the P
         * handed off; goid -1; arg: 0 retaken from an M in a syscall, 1 a hog ignored preemption
         * and a spare P was lent to run the rest of its queue.
         */
        PROC_HANDOFF("ProcHandoff", K_PROC_HANDOFF);

        private static final Kind[] BY_CODE = values();

        static {
            if (BY_CODE.length != K_COUNT) {
                throw new ExceptionInInitializerError("Trace.K_COUNT is " + K_COUNT + ", Trace.Kind has " + BY_CODE.length);
            }
            for (Kind k : BY_CODE) {
                if (k.code != k.ordinal()) { // the rings' codes index BY_CODE: a mismatch would mislabel every event
                    throw new ExceptionInInitializerError("Trace.Kind " + k + " has code " + k.code + ", ordinal " + k.ordinal());
                }
            }
        }

        private final String wireName;
        private final int code;

        Kind(String wireName, int code) {
            this.wireName = wireName;
            this.code = code;
        }

        /** Go's name for the event ({@code "GoCreate"}, {@code "Steal"}, ...), as trace files spell it. */
        public String wireName() {
            return wireName;
        }

        /** The code the rings store: the ordinal, one of Trace's {@code K_*} constants. */
        public int code() {
            return code;
        }

        /**
         * The kind stored as {@code code} in a ring.
         *
         * @throws IllegalArgumentException if no kind has that code
         */
        public static Kind ofCode(int code) {
            if (code < 0 || code >= BY_CODE.length) {
                throw new IllegalArgumentException("no trace event kind has code " + code);
            }
            return BY_CODE[code];
        }

        /**
         * The kind whose {@link #wireName()} is {@code name}.
         *
         * @throws IllegalArgumentException if no kind has that name
         */
        public static Kind ofWireName(String name) {
            for (Kind k : BY_CODE) {
                if (k.wireName.equals(name)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("no trace event kind is named " + name);
        }

        /** The wire name. */
        @Override
        public String toString() {
            return wireName;
        }
    }

    /**
     * How a recording times its events. Reading the clock ({@code System.nanoTime()}, 25 ns or
     * more here) is most of what an event costs, and the JVM has no cheap cycle counter like Go's
     * {@code cputicks}; the choice is between cost and the precision of the events that happen
     * while a goroutine runs.
     */
    public enum Timestamps {
        /**
         * The default. The clock is read when a goroutine starts or stops running on a P (once
         * per switch: the end of one run and the start of the next share a reading when the
         * next G was at hand) and for events off any P. Events in between on a P ({@code
         * GoCreate}, {@code GoUnpark}, {@code Steal}) do not read it: on export they are placed
         * evenly between the clocked events around them on the same P. Their order on the P is
         * exact and their time lies within the run (or the gap between runs) they happened in;
         * run slices are exact.
         */
        INTERPOLATED,
        /** Every event reads the clock: exact in-run times, at about one more clock read per event. */
        EXACT
    }

    /**
     * Kind codes as stored in the rings, one per {@link Kind} (its ordinal; Kind checks it when it
     * is loaded). Plain int constants so that an emission point stores a literal and touches no
     * enum; a recording is decoded to Kind only when it is read.
     */
    static final int K_GO_CREATE = 0;
    static final int K_GO_START = 1;
    static final int K_GO_END = 2;
    static final int K_GO_PARK = 3;
    static final int K_GO_UNPARK = 4;
    static final int K_GO_PREEMPT = 5;
    static final int K_GO_SCHED = 6;
    static final int K_GO_SYSCALL = 7;
    static final int K_GO_SYSEXIT = 8;
    static final int K_STEAL = 9;
    static final int K_PROC_HANDOFF = 10;
    /** How many kinds there are: codes are 0 .. K_COUNT - 1. */
    static final int K_COUNT = 11;

    /**
     * Whether a recording or a flight recorder is active. Plain on purpose: an emission point that
     * reads a stale value records a few events more or fewer at the edges of a recording, which is
     * harmless, and the check then costs one load. start/stop publish it with fences.
     */
    boolean on;

    /** Guards starting and stopping: at most one recording and one flight recorder at a time. */
    private final Object lock = new Object();
    private volatile Recording active;
    /** The flight recorder, or null; see FlightRecorder. */
    private volatile FlightRecorder flight;

    /** One per runtime: Sched makes it. */
    Trace() {
    }

    /**
     * Starts recording into rings of {@code capacityPerP} events per P, with
     * {@link Timestamps#INTERPOLATED} times for events inside a run.
     *
     * @throws IllegalArgumentException if capacityPerP is below 1 or above 1,048,576
     * @throws IllegalStateException if a recording is already active
     */
    public Recording start(int capacityPerP) {
        return start(capacityPerP, Timestamps.INTERPOLATED);
    }

    /**
     * Starts recording into rings of {@code capacityPerP} events per P, timing events as
     * {@code timestamps} says.
     *
     * @throws IllegalArgumentException if capacityPerP is below 1 or above 1,048,576
     * @throws NullPointerException if timestamps is null
     * @throws IllegalStateException if a recording is already active
     */
    public Recording start(int capacityPerP, Timestamps timestamps) {
        if (capacityPerP < 1 || capacityPerP > 1 << 20) {
            throw new IllegalArgumentException("capacityPerP must be between 1 and 1048576: " + capacityPerP);
        }
        Objects.requireNonNull(timestamps, "timestamps");
        synchronized (lock) {
            if (active != null) {
                throw new IllegalStateException("a trace recording is already active");
            }
            Recording r = new Recording(this, capacityPerP, timestamps);
            active = r;
            on = true;
            VarHandle.fullFence();
            return r;
        }
    }

    /** The most goroutines whose labels one recording keeps. */
    static final int MAX_LABELLED = 1 << 16;

    /** Notes goid's labels for the active recording, if any (called when on, off the hot path). */
    void recordLabels(long goid, java.util.Map<String, String> labels) {
        Recording r = active;
        if (r != null && (r.labels.size() < MAX_LABELLED || r.labels.containsKey(goid))) {
            r.labels.put(goid, labels);
        }
    }

    /** Whether a recording of this runtime is active. */
    public boolean isRecording() {
        return active != null;
    }

    /**
     * Starts the flight recorder (Go's trace.FlightRecorder): the last {@code window} of events,
     * always on, with the default budget of {@link FlightRecorder#DEFAULT_MAX_EVENTS_PER_P} events
     * per P. It runs alongside {@link #start} recordings.
     *
     * @throws IllegalArgumentException if window is not positive or longer than {@link FlightRecorder#MAX_WINDOW}
     * @throws IllegalStateException if a flight recorder is already active
     */
    public FlightRecorder flightRecorder(Duration window) {
        return flightRecorder(window, FlightRecorder.DEFAULT_MAX_EVENTS_PER_P);
    }

    /**
     * As {@link #flightRecorder(Duration)} keeping at most {@code maxEventsPerP} events per P
     * (rounded up to whole chunks of 4096); a window that needs more loses its oldest part.
     *
     * @throws IllegalArgumentException if maxEventsPerP is below 1 or above 16,777,216
     */
    public FlightRecorder flightRecorder(Duration window, int maxEventsPerP) {
        Objects.requireNonNull(window, "window");
        if (window.isNegative() || window.isZero() || window.compareTo(FlightRecorder.MAX_WINDOW) > 0) {
            throw new IllegalArgumentException("window must be positive and at most " + FlightRecorder.MAX_WINDOW + ": " + window);
        }
        if (maxEventsPerP < 1 || maxEventsPerP > 1 << 24) {
            throw new IllegalArgumentException("maxEventsPerP must be between 1 and 16777216: " + maxEventsPerP);
        }
        synchronized (lock) {
            if (flight != null) {
                throw new IllegalStateException("a flight recorder is already active");
            }
            FlightRecorder f = new FlightRecorder(this, window, maxEventsPerP);
            flight = f;
            on = true;
            VarHandle.fullFence();
            return f;
        }
    }

    /** This runtime's active flight recorder, or null. */
    public FlightRecorder activeFlightRecorder() {
        return flight;
    }

    void flightStopped(FlightRecorder f) {
        synchronized (lock) {
            if (flight == f) {
                flight = null;
                on = active != null;
                VarHandle.fullFence();
            }
        }
    }

    /**
     * The clock reading for the end of a run (M.traceClock): always with a recording active; with
     * only the flight recorder, one time in FlightRecorder.CLOCK_PERIOD, else UNTIMED.
     */
    long switchClock(P pp) {
        FlightRecorder f = flight;
        if (f != null && active == null) {
            return f.switchClock(pp);
        }
        return System.nanoTime();
    }

    /**
     * The M is past findRunnable's fast path and may go idle: if the end of its last run was not
     * clocked, the flight recorder gets a clocked anchor now, so no idle gap is interpolated over.
     */
    void anchor(P pp, long traceClock) {
        FlightRecorder f = flight;
        if (f != null && traceClock == UNTIMED && pp != null) {
            f.put(pp, System.nanoTime(), -1, FlightRecorder.K_CLOCK, 0);
        }
    }

    /** The kind of code k (read side only: recording stores the int). */
    static Kind kindOf(int k) {
        return Kind.ofCode(k);
    }

    // The hot paths below are small and flat on purpose: the scheduler calls them from execute and
    // goready, large methods where C2 declines to inline callees of more than a few dozen
    // bytecodes at sites it does not rate hot (-XX:+PrintInlining showed an event as a chain of
    // three real calls before). Now record/recordAt/recordUntimed -> put -> putAs inline whole.

    /** Records an event of the M holding pp (pp may be null: then the shared ring), reading the clock. */
    void record(P pp, long goid, int kind, long arg) {
        FlightRecorder f = flight;
        if (f != null) {
            f.put(pp, System.nanoTime(), goid, kind, arg);
            if (active == null) {
                return;
            }
        }
        Ring ring = pp != null ? pp.traceRing : null;
        if (ring != null && ring.recording == active) {
            ring.put(System.nanoTime() - ring.startNanos, goid, kind, arg);
        } else {
            recordSlow(pp, System.nanoTime(), goid, kind, arg, false);
        }
    }

    /**
     * Records an event on pp's ring without reading the clock, unless the recording wants exact
     * times or there is no P (the shared ring has many writers, so ring order says nothing about
     * time there). For events between two clocked events of the same P: those inside a run
     * ({@code GoCreate}, {@code GoUnpark}) and between runs ({@code Steal}). The export places it
     * between its clocked neighbours (Ring.copyTo).
     */
    void recordUntimed(P pp, long goid, int kind, long arg) {
        FlightRecorder f = flight;
        if (f != null) {
            f.put(pp, UNTIMED, goid, kind, arg);
            if (active == null) {
                return; // no clock read for a flight-only event
            }
        }
        Ring ring = pp != null ? pp.traceRing : null;
        if (ring != null && ring.untimed && ring.recording == active) {
            ring.put(UNTIMED, goid, kind, arg);
        } else {
            recordSlow(pp, System.nanoTime(), goid, kind, arg, true);
        }
    }

    /**
     * Records an event that happened at {@code nanoTime} (a {@code System.nanoTime()} the caller
     * took for another event of the same scheduling step). Reading the clock is most of an
     * event's cost, and a goroutine switch records the end of one run and the start of the next
     * a few dozen nanoseconds apart: the scheduler takes the clock once for both (see
     * M.traceClock). A time from before the recording started is exported as its start.
     */
    void recordAt(P pp, long nanoTime, long goid, int kind, long arg) {
        FlightRecorder f = flight;
        if (f != null) {
            f.put(pp, nanoTime, goid, kind, arg); // UNTIMED when switchClock sampled this switch out
            if (active == null) {
                return;
            }
        }
        if (nanoTime == UNTIMED) {
            nanoTime = System.nanoTime(); // a recording started after the flight recorder's reading
        }
        Ring ring = pp != null ? pp.traceRing : null;
        if (ring != null && ring.recording == active) {
            ring.put(nanoTime - ring.startNanos, goid, kind, arg);
        } else {
            recordSlow(pp, nanoTime, goid, kind, arg, false);
        }
    }

    /**
     * The first event of a P in a recording (its ring is made here), an event off any P, or one
     * after the recording stopped (dropped). {@code untimed}: an event recordUntimed would not
     * clock, which stays untimed on a P's ring unless the recording is exact.
     */
    private void recordSlow(P pp, long nanoTime, long goid, int kind, long arg, boolean untimed) {
        Recording r = active;
        if (r == null) {
            return;
        }
        long ts = nanoTime - r.startNanos;
        if (pp == null) {
            r.shared.putShared(-1, ts, goid, kind, arg);
            return;
        }
        Ring ring = pp.traceRing;
        if (ring == null || ring.recording != r) {
            ring = new Ring(r, pp.id, r.capacity);
            pp.traceRing = ring;
            r.rings.add(ring);
        }
        ring.put(untimed && ring.untimed ? UNTIMED : ts, goid, kind, arg);
    }

    /** Records an event about P {@code p} from a thread that does not hold it (sysmon, hand-offs). */
    void recordShared(int p, long goid, int kind, long arg) {
        FlightRecorder f = flight;
        if (f != null) {
            f.putShared(p, goid, kind, arg);
        }
        Recording r = active;
        if (r == null) {
            return;
        }
        r.shared.putShared(p, System.nanoTime() - r.startNanos, goid, kind, arg);
    }

    /** The time slot of an event recorded by {@link #recordUntimed}, until the export places it. */
    static final long UNTIMED = Long.MIN_VALUE;

    /** An active or finished recording. */
    public static final class Recording {
        private final Trace owner;
        private final int capacity;
        private final Timestamps timestamps;
        private final long startNanos = System.nanoTime();
        private final ConcurrentLinkedQueue<Ring> rings = new ConcurrentLinkedQueue<>();
        /** goid -> the pprof labels it last had while recording (only goroutines with labels); bounded. */
        private final java.util.concurrent.ConcurrentHashMap<Long, java.util.Map<String, String>> labels =
                new java.util.concurrent.ConcurrentHashMap<>();
        private final Ring shared;
        private List<Event> result;

        private Recording(Trace owner, int capacity, Timestamps timestamps) {
            this.owner = owner;
            this.capacity = capacity;
            this.timestamps = timestamps;
            this.shared = new Ring(this, -1, capacity);
        }

        /** How this recording times its events. */
        public Timestamps timestamps() {
            return timestamps;
        }

        /** Stops recording (idempotent) and returns the events ordered by time. */
        public List<Event> stop() {
            synchronized (owner.lock) {
                if (result != null) {
                    return result;
                }
                if (owner.active == this) {
                    owner.active = null;
                    owner.on = owner.flight != null;
                    VarHandle.fullFence();
                }
            }
            // Every event was written before this reading, or is one of the few of writers racing
            // the stop: the upper bound for untimed events after a P's last clocked one.
            long stopTs = System.nanoTime() - startNanos;
            // Writers that read `active` just before it was cleared finish within microseconds;
            // give them a moment before copying their rings.
            LockSupport.parkNanos(2_000_000);
            List<Event> events = new ArrayList<>();
            for (Ring ring : rings) {
                ring.copyTo(events, stopTs);
            }
            synchronized (shared) {
                shared.copyTo(events, stopTs);
            }
            // Stable: events of one ring with equal times keep the ring's (the P's) order.
            events.sort(Comparator.comparingLong(Event::tsNanos));
            result = List.copyOf(events);
            return result;
        }

        /**
         * The pprof labels of the goroutines created or labelled while recording, by goid (the
         * labels each last had; goroutines without labels are absent): exported as trace args.
         * At most {@value #MAX_LABELLED} goroutines are kept.
         */
        public java.util.Map<Long, java.util.Map<String, String>> labels() {
            return java.util.Map.copyOf(labels);
        }

        /** Events overwritten because a ring was full (the rings keep the newest). */
        public long dropped() {
            long d = shared.dropped();
            for (Ring ring : rings) {
                d += ring.dropped();
            }
            return d;
        }
    }

    /**
     * A ring of events with one writer (or, for the shared ring, writers holding its monitor).
     * Each event is four consecutive longs (time, goid, arg, kind << 32 | p) in one array: one
     * cache line holds two events and the writer stores no references, so recording costs a
     * clock read and a few sequential stores.
     */
    static final class Ring {
        private static final int SLOT = 4;
        private static final VarHandle WRITTEN;

        static {
            try {
                WRITTEN = MethodHandles.lookup().findVarHandle(Ring.class, "written", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final Recording recording;
        /** The recording's start, copied here so that the hot path reads one object. */
        final long startNanos;
        /** Whether in-run events skip the clock (the recording is not EXACT). */
        final boolean untimed;
        private final long pidBits;
        private final int capacity;
        private final long[] data;
        /** Events ever written; published with a release store after each write. */
        private long written;
        /** Index in data of the next slot to write; writer only. */
        private int next;

        Ring(Recording recording, int p, int capacity) {
            this.recording = recording;
            this.startNanos = recording != null ? recording.startNanos : 0;
            this.untimed = recording == null || recording.timestamps == Timestamps.INTERPOLATED;
            this.pidBits = p & 0xFFFF_FFFFL;
            this.capacity = capacity;
            this.data = new long[capacity * SLOT];
        }

        /** Writes an event of this ring's P. Single writer: the M holding the P. */
        void put(long t, long g, int k, long a) {
            putAs(pidBits, t, g, k, a);
        }

        /** Writes an event about P {@code pid} (-1: none) to the shared ring. */
        synchronized void putShared(int pid, long t, long g, int k, long a) {
            putAs(pid & 0xFFFF_FFFFL, t, g, k, a);
        }

        private void putAs(long pid, long t, long g, int k, long a) {
            long[] d = data;
            int i = next; // == (written % capacity) * SLOT, kept apart to avoid a long division per event
            next = i + SLOT == d.length ? 0 : i + SLOT;
            d[i] = t;
            d[i + 1] = g;
            d[i + 2] = a;
            d[i + 3] = ((long) (k + 1) << 32) | pid; // kind + 1: 0 marks an empty slot
            WRITTEN.setRelease(this, written + 1);
        }

        long dropped() {
            long w = (long) WRITTEN.getAcquire(this);
            return Math.max(0, w - capacity);
        }

        /**
         * Appends the ring's events, oldest first, placing each run of untimed events evenly
         * between the clocked events before and after it. Ring order is the P's real order, so the
         * true time of an untimed event lies in that bracket. Untimed events whose clocked
         * predecessor was overwritten take the time of their successor; those after the last
         * clocked event are placed before {@code stopTs}.
         */
        void copyTo(List<Event> out, long stopTs) {
            long w = (long) WRITTEN.getAcquire(this);
            long from = Math.max(0, w - capacity);
            long before = UNTIMED; // the last clocked time seen
            int firstUntimed = -1; // index in out of the oldest event still waiting for a time
            for (long n = from; n < w; n++) {
                int i = (int) (n % capacity) * SLOT;
                long meta = data[i + 3];
                int k = (int) (meta >>> 32) - 1;
                if (k < 0 || k >= K_COUNT) {
                    continue;
                }
                long t = data[i];
                if (t < 0 && t != UNTIMED) {
                    t = 0; // a switch whose clock reading predates the recording: at its start
                }
                if (t == UNTIMED) {
                    if (firstUntimed < 0) {
                        firstUntimed = out.size();
                    }
                    out.add(new Event(UNTIMED, (int) meta, data[i + 1], Kind.ofCode(k), data[i + 2], true));
                    continue;
                }
                if (firstUntimed >= 0) {
                    place(out, firstUntimed, before, t);
                    firstUntimed = -1;
                }
                out.add(new Event(t, (int) meta, data[i + 1], Kind.ofCode(k), data[i + 2], false));
                before = t;
            }
            if (firstUntimed >= 0) {
                place(out, firstUntimed, before, stopTs);
            }
        }

        /** Spreads out[first..] evenly inside (before, after); before is UNTIMED when unknown. */
        private static void place(List<Event> out, int first, long before, long after) {
            long lo = before == UNTIMED ? after : Math.min(before, after);
            double step = (double) (after - lo) / (out.size() - first + 1);
            for (int j = first; j < out.size(); j++) {
                Event e = out.get(j);
                long ts = lo + (long) (step * (j - first + 1));
                out.set(j, new Event(ts, e.p(), e.goid(), e.kind(), e.arg(), true));
            }
        }
    }
}
