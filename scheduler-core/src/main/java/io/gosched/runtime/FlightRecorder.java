package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An always-on trace that keeps the last {@link #window()} of scheduler events (Go 1.25's
 * runtime/trace.FlightRecorder) of one runtime. Start one with
 * {@code runtime.trace().flightRecorder(window)} ({@link Trace#flightRecorder(Duration)}); {@link
 * #snapshot()} returns the events of the last window, at any time and as often as wanted, while
 * recording goes on. At most one flight recorder is active per runtime; it runs alongside a
 * {@link Trace#start} recording.
 *
 * <p>Layout: each P writes its own buffer (single writer: the M holding the P), a list of chunks
 * of {@value #CHUNK_EVENTS} events, oldest first. When a chunk is full, the oldest one is reused
 * if its newest event is older than the window, or if the P has used its budget of chunks;
 * otherwise a new chunk is added. So memory follows the event rate times the window, up to the
 * budget; a snapshot whose window did not fit the budget says so ({@link Snapshot#complete()}).
 * Events from threads without a P go to one shared buffer under its monitor.
 *
 * <p>What it costs, and why it reads the clock less than a recording does: the clock ({@code
 * System.nanoTime()}, 25 ns or more here) is most of an event's cost. A flight recorder reads it
 * at one goroutine switch in {@value #CLOCK_PERIOD} on a P's fast path (the next G at hand), at
 * every switch that left the fast path (when the P may go idle, so no idle gap is ever
 * interpolated over), and for events off any P; the events in between are placed evenly between
 * their clocked neighbours on export and marked {@code interpolated}. Order on a P is exact; a run
 * slice on the fast path is exact to within the span of {@value #CLOCK_PERIOD} switches. A
 * {@link Trace#start} recording active at the same time makes every switch read the clock again.
 * Measured cost: docs/telemetry.md, "Flight recorder".
 *
 * Go: runtime/trace/flightrecorder.go (the idea; the format here is the flat event list of Trace)
 */
public final class FlightRecorder implements AutoCloseable {

    /** Events per chunk: 96 KiB of longs. */
    static final int CHUNK_EVENTS = 4096;
    /** On a P's fast path, one switch in this many reads the clock. */
    static final int CLOCK_PERIOD = 8;
    /**
     * Default budget of events per P: 16 chunks, 1.5 MiB, as many events as a {@link Trace#start}
     * ring holds by default. A bigger budget holds a longer window on a busy P, but the writes
     * then stream through more memory, which costs a few percent (see Trace's ring size notes).
     */
    public static final int DEFAULT_MAX_EVENTS_PER_P = 16 * CHUNK_EVENTS;
    /** The longest window accepted. */
    public static final Duration MAX_WINDOW = Duration.ofMinutes(10);

    /** A clock-only event: an anchor for placing untimed events, never exported. */
    static final int K_CLOCK = 63;

    private final Trace owner;
    private final long windowNanos;
    private final int maxChunks;
    final long startNanos = System.nanoTime();
    private final ConcurrentLinkedQueue<Buffer> buffers = new ConcurrentLinkedQueue<>();
    private final Buffer shared;
    private volatile boolean closed;

    FlightRecorder(Trace owner, Duration window, int maxEventsPerP) {
        this.owner = owner;
        this.windowNanos = window.toNanos();
        this.maxChunks = Math.max(1, (maxEventsPerP + CHUNK_EVENTS - 1) / CHUNK_EVENTS);
        this.shared = new Buffer(this, -1);
    }

    /** How far back a snapshot reaches. */
    public Duration window() {
        return Duration.ofNanos(windowNanos);
    }

    /** The budget of events per P, a multiple of the chunk size. */
    public int maxEventsPerP() {
        return maxChunks * CHUNK_EVENTS;
    }

    /** Whether it is still recording (not closed). */
    public boolean isActive() {
        return !closed;
    }

    /** Stops recording (idempotent); snapshot() still returns what was kept. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            owner.flightStopped(this);
        }
    }

    /**
     * The events of the last window, ordered by time: none older than {@code now - window}. Times
     * are nanoseconds since the recorder started. Recording goes on; an event written while the
     * snapshot runs may or may not be in it.
     */
    public Snapshot snapshot() {
        long now = System.nanoTime() - startNanos;
        long cutoff = now - windowNanos;
        List<Trace.Event> events = new ArrayList<>();
        boolean complete = true;
        for (Buffer b : buffers) {
            complete &= b.copyTo(events, now, cutoff);
        }
        synchronized (shared) {
            complete &= shared.copyTo(events, now, cutoff);
        }
        events.sort(Comparator.comparingLong(Trace.Event::tsNanos)); // stable: a P's order holds
        return new Snapshot(List.copyOf(events), Math.max(0, cutoff), now, complete);
    }

    /**
     * A snapshot: events with {@code fromNanos <= tsNanos <= toNanos} (nanoseconds since the
     * recorder started). {@code complete} is false when some P's budget of events did not hold the
     * whole window: the oldest part of that P's track is missing.
     */
    public record Snapshot(List<Trace.Event> events, long fromNanos, long toNanos, boolean complete) {
    }

    // ---- writers (called by Trace's emission points) ------------------------------------------

    /** An event of the M holding pp (null: the shared buffer); nanoTime is a System.nanoTime() or Trace.UNTIMED. */
    void put(P pp, long nanoTime, long goid, int kind, long arg) {
        long ts = nanoTime == Trace.UNTIMED ? Trace.UNTIMED : nanoTime - startNanos;
        if (pp == null) {
            shared.putShared(-1, nanoTime == Trace.UNTIMED ? System.nanoTime() - startNanos : ts, goid, kind, arg);
            return;
        }
        Buffer b = pp.flightBuffer;
        if (b == null || b.recorder != this) {
            b = buffer(pp);
        }
        b.put(ts, goid, kind, arg);
    }

    /** An event about P p from a thread that does not hold it. */
    void putShared(int p, long goid, int kind, long arg) {
        shared.putShared(p, System.nanoTime() - startNanos, goid, kind, arg);
    }

    /**
     * The end of a run on pp's fast path: a clock reading one time in CLOCK_PERIOD, else
     * Trace.UNTIMED (see the class comment).
     */
    long switchClock(P pp) {
        Buffer b = pp != null ? pp.flightBuffer : null;
        if (b != null && b.recorder == this && --b.untilClock > 0) {
            return Trace.UNTIMED;
        }
        if (b != null) {
            b.untilClock = CLOCK_PERIOD;
        }
        return System.nanoTime();
    }

    private Buffer buffer(P pp) {
        Buffer b = new Buffer(this, pp.id);
        pp.flightBuffer = b;
        buffers.add(b);
        return b;
    }

    /**
     * One P's events (or the shared ones, under the buffer's monitor). Each event is three longs:
     * time (or Trace.UNTIMED), goid << 16 | (p + 1), kind + 1 in the top byte and arg in the low 56
     * bits (sign-extended on export).
     */
    static final class Buffer {
        private static final int SLOT = 3;
        private static final long ARG_MASK = (1L << 56) - 1;

        final FlightRecorder recorder;
        private final long pidBits;
        /** Oldest first; replaced (copy on write) by the writer at each chunk switch. */
        private volatile Chunk[] chunks;
        private Chunk cur;
        private long[] data;
        private int next;
        /** Events in the current chunk; writer only. */
        private int inChunk;
        /** Switches left until the next clocked one (FlightRecorder.switchClock). */
        int untilClock = CLOCK_PERIOD;
        /** When a chunk holding events of the then window was reused for lack of budget, or MIN_VALUE. */
        private volatile long budgetReuse = Long.MIN_VALUE;

        Buffer(FlightRecorder recorder, int p) {
            this.recorder = recorder;
            this.pidBits = (p + 1) & 0xFFFF;
            this.cur = new Chunk();
            this.data = cur.data;
            this.chunks = new Chunk[] {cur};
        }

        void put(long t, long g, int k, long a) {
            putAs(pidBits, t, g, k, a);
        }

        synchronized void putShared(int p, long t, long g, int k, long a) {
            putAs((p + 1) & 0xFFFF, t, g, k, a);
        }

        private void putAs(long pid, long t, long g, int k, long a) {
            long[] d = data;
            int i = next;
            if (i == d.length) {
                d = nextChunk();
                i = 0;
                inChunk = 0;
            }
            d[i] = t;
            d[i + 1] = (g << 16) | pid;
            d[i + 2] = ((long) (k + 1) << 56) | (a & ARG_MASK);
            next = i + SLOT;
            cur.publish(++inChunk);
        }

        /** The current chunk is full: reuse the oldest or add one (see the class comment). */
        private long[] nextChunk() {
            Chunk[] cs = chunks;
            long newest = cur.lastClocked();
            Chunk oldest = cs[0];
            long oldestNewest = oldest.lastClocked();
            boolean expired = cs.length > 1 && oldestNewest != Trace.UNTIMED && newest != Trace.UNTIMED
                    && newest - oldestNewest > recorder.windowNanos;
            Chunk c;
            Chunk[] order;
            if (cs.length > 1 && (expired || cs.length >= recorder.maxChunks)) {
                if (!expired) {
                    budgetReuse = newest;
                }
                c = oldest;
                c.recycle();
                order = Arrays.copyOf(Arrays.copyOfRange(cs, 1, cs.length), cs.length);
            } else if (cs.length >= recorder.maxChunks) { // a budget of one chunk: reuse it in place
                budgetReuse = newest;
                c = oldest;
                c.recycle();
                order = cs;
            } else {
                c = new Chunk();
                order = Arrays.copyOf(cs, cs.length + 1);
            }
            order[order.length - 1] = c;
            chunks = order;
            cur = c;
            data = c.data;
            return data;
        }

        /**
         * Appends this buffer's events of [cutoff, now], placing untimed ones between their
         * clocked neighbours. Returns false when the budget cut into the window.
         */
        boolean copyTo(List<Trace.Event> out, long now, long cutoff) {
            long[] all = new long[0];
            int n = 0;
            for (Chunk c : chunks) {
                long[] copy = c.copy();
                if (copy == null) {
                    continue; // reused while we read: its events were the oldest
                }
                if (n + copy.length > all.length) {
                    all = Arrays.copyOf(all, Math.max(all.length * 2, n + copy.length));
                }
                System.arraycopy(copy, 0, all, n, copy.length);
                n += copy.length;
            }
            int first = out.size();
            long before = Trace.UNTIMED;
            int firstUntimed = -1;
            for (int i = 0; i < n; i += SLOT) {
                long t = all[i];
                long meta = all[i + 2];
                int k = (int) (meta >>> 56) - 1;
                long g = all[i + 1] >> 16;
                int p = (int) (all[i + 1] & 0xFFFF) - 1;
                long arg = (meta << 8) >> 8;
                if (t == Trace.UNTIMED) {
                    if (firstUntimed < 0) {
                        firstUntimed = out.size();
                    }
                    out.add(new Trace.Event(Trace.UNTIMED, p, g, Trace.kindOf(k), arg, true));
                    continue;
                }
                if (firstUntimed >= 0) {
                    place(out, firstUntimed, before, t);
                    firstUntimed = -1;
                }
                if (k != K_CLOCK) {
                    out.add(new Trace.Event(Math.max(0, t), p, g, Trace.kindOf(k), arg, false));
                }
                before = t;
            }
            if (firstUntimed >= 0) {
                place(out, firstUntimed, before, now);
            }
            // Nothing older than the window, nothing placed after now.
            out.subList(first, out.size()).removeIf(e -> e.tsNanos() < cutoff || e.tsNanos() > now);
            return budgetReuse < cutoff;
        }

        /** Spreads out[first..] evenly inside (before, after); before is UNTIMED when unknown. */
        private static void place(List<Trace.Event> out, int first, long before, long after) {
            long lo = before == Trace.UNTIMED ? after : Math.min(before, after);
            double step = (double) (after - lo) / (out.size() - first + 1);
            for (int j = first; j < out.size(); j++) {
                Trace.Event e = out.get(j);
                long ts = lo + (long) (step * (j - first + 1));
                out.set(j, new Trace.Event(ts, e.p(), e.goid(), e.kind(), e.arg(), true));
            }
        }
    }

    /**
     * CHUNK_EVENTS events and a seqlock: the writer bumps seq before it reuses the chunk, and a
     * reader that sees seq change while it copies throws its copy away.
     */
    static final class Chunk {
        private static final VarHandle SEQ;
        private static final VarHandle COUNT;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                SEQ = l.findVarHandle(Chunk.class, "seq", long.class);
                COUNT = l.findVarHandle(Chunk.class, "count", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final long[] data = new long[CHUNK_EVENTS * Buffer.SLOT];
        private long seq;
        /** Events written; a release store after each, so a reader sees whole events. */
        private int count;

        void publish(int n) {
            COUNT.setRelease(this, n);
        }

        void recycle() {
            // count first: a reader that sees the new seq sees no stale count with it
            COUNT.setRelease(this, 0);
            SEQ.setRelease(this, seq + 1);
            VarHandle.storeStoreFence(); // the new events' stores stay after the bump
        }

        /** The newest clocked time in the chunk, or UNTIMED. Writer only. */
        long lastClocked() {
            for (int i = ((int) COUNT.get(this) - 1) * Buffer.SLOT; i >= 0; i -= Buffer.SLOT) {
                if (data[i] != Trace.UNTIMED) {
                    return data[i];
                }
            }
            return Trace.UNTIMED;
        }

        /** A consistent copy of the written events, or null when the writer reused the chunk meanwhile. */
        long[] copy() {
            long s = (long) SEQ.getAcquire(this);
            int c = (int) COUNT.getAcquire(this);
            long[] copy = Arrays.copyOf(data, c * Buffer.SLOT);
            VarHandle.loadLoadFence();
            return (long) SEQ.getAcquire(this) == s ? copy : null;
        }
    }
}
