package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Records scheduler events (goroutine runs, parks, unparks, steals, preemptions, syscalls,
 * hand-offs) for a trace viewer, like Go's runtime/trace at a much smaller scale.
 *
 * <p>Off by default and nearly free when off: every emission point is
 * {@code if (Trace.on) Trace.record(...)}, one read of a static field. When on, each P writes its
 * own ring (single writer: the M holding the P), so recording adds no shared contended state;
 * events from threads without a P go to one shared ring under a lock. Rings keep the newest
 * events; {@link Recording#dropped()} counts the overwritten ones.
 *
 * Go: runtime/trace.go (the idea; the format here is a flat event list)
 */
public final class Trace {

    /** One event. {@code p} is -1 for events outside any P; {@code goid} -1 when no goroutine applies. */
    public record Event(long tsNanos, int p, long goid, String kind, long arg) {
    }

    public static final String GO_CREATE = "GoCreate";
    public static final String GO_START = "GoStart";
    public static final String GO_END = "GoEnd";
    public static final String GO_PARK = "GoPark";
    public static final String GO_UNPARK = "GoUnpark";
    public static final String GO_PREEMPT = "GoPreempt";
    public static final String GO_SCHED = "GoSched";
    public static final String GO_SYSCALL = "GoSysCall";
    public static final String GO_SYSEXIT = "GoSysExit";
    public static final String STEAL = "Steal";
    public static final String PROC_HANDOFF = "ProcHandoff";

    /** Kind codes as stored in the rings; index into KINDS. */
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
    private static final String[] KINDS = {GO_CREATE, GO_START, GO_END, GO_PARK, GO_UNPARK, GO_PREEMPT,
        GO_SCHED, GO_SYSCALL, GO_SYSEXIT, STEAL, PROC_HANDOFF};

    /**
     * Whether a recording is active. Plain on purpose: an emission point that reads a stale
     * value records a few events more or fewer at the edges of a recording, which is harmless,
     * and the check then costs one load. start/stop publish it with fences.
     */
    static boolean on;

    private static final Object LOCK = new Object();
    private static volatile Recording active;

    private Trace() {
    }

    /**
     * Starts recording into rings of {@code capacityPerP} events per P.
     *
     * @throws IllegalArgumentException if capacityPerP is below 1 or above 1,048,576
     * @throws IllegalStateException if a recording is already active
     */
    public static Recording start(int capacityPerP) {
        if (capacityPerP < 1 || capacityPerP > 1 << 20) {
            throw new IllegalArgumentException("capacityPerP must be between 1 and 1048576: " + capacityPerP);
        }
        synchronized (LOCK) {
            if (active != null) {
                throw new IllegalStateException("a trace recording is already active");
            }
            Recording r = new Recording(capacityPerP);
            active = r;
            on = true;
            VarHandle.fullFence();
            return r;
        }
    }

    /** Whether a recording is active. */
    public static boolean isRecording() {
        return active != null;
    }

    /** Records an event of the M holding pp (pp may be null: then the shared ring). */
    static void record(P pp, long goid, int kind, long arg) {
        Recording r = active;
        if (r == null) {
            return;
        }
        add(r, pp, System.nanoTime() - r.startNanos, goid, kind, arg);
    }

    /**
     * Records an event that happened at {@code nanoTime} (a {@code System.nanoTime()} the caller
     * took for another event of the same scheduling step). Reading the clock is most of an
     * event's cost (about 25 of 40 ns here), and a goroutine switch records the end of one run and
     * the start of the next a few dozen nanoseconds apart: the scheduler takes the clock once for
     * both (see M.traceClock). A time from before the recording started is replaced by now.
     */
    static void recordAt(P pp, long nanoTime, long goid, int kind, long arg) {
        Recording r = active;
        if (r == null) {
            return;
        }
        long ts = nanoTime - r.startNanos;
        add(r, pp, ts >= 0 ? ts : System.nanoTime() - r.startNanos, goid, kind, arg);
    }

    private static void add(Recording r, P pp, long ts, long goid, int kind, long arg) {
        if (pp == null) {
            r.shared.add(-1, ts, goid, kind, arg);
            return;
        }
        Ring ring = pp.traceRing;
        if (ring == null || ring.recording != r) {
            ring = new Ring(r, pp.id, r.capacity);
            pp.traceRing = ring;
            r.rings.add(ring);
        }
        ring.add(pp.id, ts, goid, kind, arg);
    }

    /** Records an event about P {@code p} from a thread that does not hold it (sysmon, hand-offs). */
    static void recordShared(int p, long goid, int kind, long arg) {
        Recording r = active;
        if (r == null) {
            return;
        }
        r.shared.add(p, System.nanoTime() - r.startNanos, goid, kind, arg);
    }

    /** An active or finished recording. */
    public static final class Recording {
        private final int capacity;
        private final long startNanos = System.nanoTime();
        private final ConcurrentLinkedQueue<Ring> rings = new ConcurrentLinkedQueue<>();
        private final Ring shared;
        private List<Event> result;

        private Recording(int capacity) {
            this.capacity = capacity;
            this.shared = new Ring(this, -1, capacity);
        }

        /** Stops recording (idempotent) and returns the events ordered by time. */
        public List<Event> stop() {
            synchronized (LOCK) {
                if (result != null) {
                    return result;
                }
                if (active == this) {
                    active = null;
                    on = false;
                    VarHandle.fullFence();
                }
            }
            // Writers that read `active` just before it was cleared finish within microseconds;
            // give them a moment before copying their rings.
            LockSupport.parkNanos(2_000_000);
            List<Event> events = new ArrayList<>();
            for (Ring ring : rings) {
                ring.copyTo(events);
            }
            synchronized (shared) {
                shared.copyTo(events);
            }
            events.sort(Comparator.comparingLong(Event::tsNanos));
            result = List.copyOf(events);
            return result;
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
        private final boolean shared;
        private final int capacity;
        private final long[] data;
        /** Events ever written; published with a release store after each write. */
        private long written;
        /** Index in data of the next slot to write; writer only. */
        private int next;

        Ring(Recording recording, int p, int capacity) {
            this.recording = recording;
            this.shared = p < 0;
            this.capacity = capacity;
            this.data = new long[capacity * SLOT];
        }

        void add(int pid, long t, long g, int k, long a) {
            if (shared) {
                synchronized (this) {
                    put(pid, t, g, k, a);
                }
            } else {
                put(pid, t, g, k, a);
            }
        }

        private void put(int pid, long t, long g, int k, long a) {
            long w = written;
            int i = next; // == (w % capacity) * SLOT, kept apart to avoid a long division per event
            next = i + SLOT == data.length ? 0 : i + SLOT;
            long[] d = data;
            d[i] = t;
            d[i + 1] = g;
            d[i + 2] = a;
            d[i + 3] = ((long) (k + 1) << 32) | (pid & 0xFFFF_FFFFL); // kind + 1: 0 marks an empty slot
            WRITTEN.setRelease(this, w + 1);
        }

        long dropped() {
            long w = (long) WRITTEN.getAcquire(this);
            return Math.max(0, w - capacity);
        }

        void copyTo(List<Event> out) {
            long w = (long) WRITTEN.getAcquire(this);
            long from = Math.max(0, w - capacity);
            for (long n = from; n < w; n++) {
                int i = (int) (n % capacity) * SLOT;
                long meta = data[i + 3];
                int k = (int) (meta >>> 32) - 1;
                if (k >= 0 && k < KINDS.length) {
                    out.add(new Event(data[i], (int) meta, data[i + 1], KINDS[k], data[i + 2]));
                }
            }
        }
    }
}
