package io.gosched.web.trace;

import io.gosched.runtime.Trace;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Turns scheduler events into the Chrome trace-event format (the JSON object form with
 * {@code traceEvents}), which Perfetto and chrome://tracing open.
 *
 * <p>Layout: one process "gosched"; one thread (track) per P, named {@code P<n>}, holding a
 * complete ({@code "X"}) slice per goroutine run, from GoStart (or a GoSysExit that got a P) to
 * whatever ended the run (GoEnd, GoPark, GoPreempt, GoSched, GoSysCall), with the ending in the
 * slice's args; instants ({@code "i"}, thread scope) on the P track for steals, unparks,
 * creations and hand-offs (a hand-off is drawn on the track of the P handed off); a "syscalls"
 * track with one slice per syscall; a "no P" track for events from outside the scheduler.
 * Timestamps are microseconds with nanosecond fractions, as the format wants.
 *
 * <p>An instant whose time was interpolated rather than read from the clock (see
 * {@code Trace.Timestamps}) says so in {@code args.time}; {@code otherData.timestamps} names the
 * recording's mode.
 *
 * <p>A run still open when the recording stopped is closed at the last event's time and marked
 * {@code "end": "recording stopped"}, so no slice is lost at the edge.
 */
public final class ChromeTrace {

    static final int PID = 1;
    static final int NO_P_TID = 100_000;
    static final int SYSCALL_TID = 100_001;

    private ChromeTrace() {}

    /** The trace-event JSON object (as maps and lists, for any JSON encoder). */
    public static Map<String, Object> of(List<TraceEvent> events) {
        return of(events, 0, Trace.Timestamps.EXACT);
    }

    /**
     * How a timestamps mode is spelled in {@code otherData.timestamps} and in the trace endpoint's
     * {@code timestamps} parameter: the enum's name in lower case.
     */
    public static String timestampsName(Trace.Timestamps timestamps) {
        return timestamps.name().toLowerCase(Locale.ROOT);
    }

    /**
     * As {@link #of(List)}, noting in {@code otherData} how many events the recorder's rings
     * overwrote (a non-zero count means the oldest part of some P's track is missing) and how
     * the recording timed its events ({@code "interpolated"} or {@code "exact"}).
     */
    public static Map<String, Object> of(List<TraceEvent> events, long dropped, Trace.Timestamps timestamps) {
        List<TraceEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(TraceEvent::tsNanos));
        List<Map<String, Object>> out = new ArrayList<>();
        TreeSet<Integer> procs = new TreeSet<>();
        Map<Integer, TraceEvent> running = new HashMap<>();     // P -> the GoStart of its current run
        Map<Long, TraceEvent> inSyscall = new HashMap<>();      // goid -> its GoSysCall
        long last = sorted.isEmpty() ? 0 : sorted.getLast().tsNanos();

        for (TraceEvent e : sorted) {
            if (e.p() >= 0) {
                procs.add(e.p());
            }
            int tid = e.p() >= 0 ? e.p() : NO_P_TID;
            switch (e.kind()) {
                case GO_START -> {
                    TraceEvent open = running.put(e.p(), e);
                    if (open != null) { // a run whose end was not recorded (ring overwrite): close it here
                        out.add(slice(open, e.tsNanos(), "next run started"));
                    }
                }
                case GO_END, GO_PARK, GO_PREEMPT, GO_SCHED, GO_SYSCALL -> {
                    TraceEvent open = running.remove(e.p());
                    if (open != null) {
                        out.add(slice(open, e.tsNanos(), endName(e)));
                    }
                    if (e.kind() == Trace.Kind.GO_SYSCALL) {
                        inSyscall.put(e.goid(), e);
                    } else if (e.kind() != Trace.Kind.GO_END) {
                        out.add(instant(e, tid, endName(e), Map.of("goid", e.goid(), "arg", e.arg())));
                    }
                }
                case GO_SYSEXIT -> {
                    TraceEvent enter = inSyscall.remove(e.goid());
                    if (enter != null) {
                        out.add(complete("syscall G" + e.goid(), SYSCALL_TID, enter.tsNanos(), e.tsNanos(),
                                Map.of("goid", e.goid(), "pRetaken", e.arg() == 1)));
                    }
                    if (e.p() >= 0) {
                        // exitsyscall got a P and the goroutine runs on at once, with no GoStart:
                        // the run resumes here and ends at its next park, yield or exit.
                        TraceEvent open = running.put(e.p(), new TraceEvent(e.tsNanos(), e.p(), e.goid(), Trace.Kind.GO_START, 0, false));
                        if (open != null) {
                            out.add(slice(open, e.tsNanos(), "next run started"));
                        }
                    }
                }
                case STEAL -> out.add(instant(e, tid, "steal from P" + e.stealVictim(),
                        Map.of("victim", e.stealVictim(), "goroutines", e.stealCount(), "firstGoid", e.goid())));
                case GO_UNPARK -> out.add(instant(e, tid, "unpark G" + e.goid(),
                        Map.of("goid", e.goid(), "by", e.arg())));
                case GO_CREATE -> out.add(instant(e, tid, "create G" + e.goid(),
                        Map.of("goid", e.goid(), "parent", e.arg())));
                case PROC_HANDOFF -> out.add(instant(e, tid, "handoff P" + e.p(),
                        Map.of("reason", e.arg() == 0 ? "syscall" : e.arg() == 1 ? "hog (spare P lent)" : "other")));
                default -> out.add(instant(e, tid, e.kind().wireName(), Map.of("goid", e.goid(), "arg", e.arg())));
            }
        }
        running.values().stream().sorted(Comparator.comparingInt(TraceEvent::p))
                .forEach(open -> out.add(slice(open, last, "recording stopped")));

        List<Map<String, Object>> meta = new ArrayList<>();
        meta.add(metadata("process_name", 0, Map.of("name", "gosched")));
        for (int p : procs) {
            meta.add(metadata("thread_name", p, Map.of("name", "P" + p)));
            meta.add(metadata("thread_sort_index", p, Map.of("sort_index", p)));
        }
        meta.add(metadata("thread_name", SYSCALL_TID, Map.of("name", "syscalls")));
        meta.add(metadata("thread_name", NO_P_TID, Map.of("name", "no P")));
        meta.addAll(out);

        Map<String, Object> trace = new LinkedHashMap<>();
        trace.put("traceEvents", meta);
        trace.put("displayTimeUnit", "ns");
        trace.put("otherData", Map.of("source", "gosched", "events", events.size(), "dropped", dropped,
                "timestamps", timestampsName(timestamps)));
        return trace;
    }

    /**
     * As {@link #of(List, long, Trace.Timestamps)}, with each goroutine's pprof labels
     * ({@code Trace.Recording.labels()}) as {@code args.labels} of its slices and instants.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> of(List<TraceEvent> events, long dropped, Trace.Timestamps timestamps,
            Map<Long, Map<String, String>> labels) {
        Map<String, Object> trace = of(events, dropped, timestamps);
        if (labels.isEmpty()) {
            return trace;
        }
        for (Map<String, Object> e : (List<Map<String, Object>>) trace.get("traceEvents")) {
            Map<String, Object> args = (Map<String, Object>) e.get("args");
            Map<String, String> l = args != null && args.get("goid") instanceof Long goid ? labels.get(goid) : null;
            if (l != null) {
                Map<String, Object> withLabels = new LinkedHashMap<>(args);
                withLabels.put("labels", l);
                e.put("args", withLabels);
            }
        }
        return trace;
    }

    private static String endName(TraceEvent e) {
        return switch (e.kind()) {
            case GO_END -> "end";
            case GO_PARK -> "park";
            case GO_PREEMPT -> e.arg() == 1 ? "preempt (handoff)" : "preempt";
            case GO_SCHED -> "yield";
            case GO_SYSCALL -> "syscall";
            default -> e.kind().wireName();
        };
    }

    private static Map<String, Object> slice(TraceEvent start, long endNanos, String end) {
        return complete("G" + start.goid(), start.p(), start.tsNanos(), endNanos, Map.of("goid", start.goid(), "end", end));
    }

    private static Map<String, Object> complete(String name, int tid, long fromNanos, long toNanos, Map<String, Object> args) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("cat", "goroutine");
        m.put("ph", "X");
        m.put("pid", PID);
        m.put("tid", tid);
        m.put("ts", micros(fromNanos));
        m.put("dur", micros(Math.max(0, toNanos - fromNanos)));
        m.put("args", args);
        return m;
    }

    private static Map<String, Object> instant(TraceEvent e, int tid, String name, Map<String, Object> args) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("cat", "sched");
        m.put("ph", "i");
        m.put("s", "t");
        m.put("pid", PID);
        m.put("tid", tid);
        m.put("ts", micros(e.tsNanos()));
        if (e.interpolated()) {
            Map<String, Object> marked = new LinkedHashMap<>(args);
            marked.put("time", "interpolated");
            args = marked;
        }
        m.put("args", args);
        return m;
    }

    private static Map<String, Object> metadata(String name, int tid, Map<String, Object> args) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("ph", "M");
        m.put("pid", PID);
        m.put("tid", tid);
        m.put("args", args);
        return m;
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }
}
