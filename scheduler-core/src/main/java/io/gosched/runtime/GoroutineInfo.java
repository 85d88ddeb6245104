package io.gosched.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of one goroutine, as {@link GoRuntime#goroutines()} and {@link
 * GoRuntime#leakedGoroutines()} report it (Go: one entry of {@code runtime.Stack(all)} or of the
 * goroutine profile).
 *
 * @param id         the goroutine id (Go's goid)
 * @param state      Go's names: {@code "running"}, {@code "runnable"}, {@code "waiting"}, {@code "syscall"}:
 *                   the {@link State#goName()} of one {@link State}
 * @param waitReason why it waits, in Go's words ({@code "chan receive"}, {@code "select"},
 *                   {@code "sleep"}, {@code "sync.Mutex.Lock"}, ...); empty unless waiting
 * @param waitingFor how long it has waited, at sysmon's tick precision (without sysmon: since the
 *                   first snapshot that saw the wait, as Go stamps {@code waitsince} at a GC);
 *                   zero unless waiting
 * @param labels     its pprof labels ({@link Go#withLabels}); never null
 * @param stack      its own frames, innermost first, runtime frames included (Go's
 *                   {@code GOTRACEBACK=system}); empty for a goroutine mounted on a thread right now
 *                   (running, in a syscall, or wired by {@code lockOSThread}), because a mounted
 *                   continuation cannot be walked from another thread without stopping it, and for
 *                   one that has not started yet
 * @param parentId   the goroutine whose {@code go} statement created it, 0 when a platform thread did
 * @param createdAt  the frame of that {@code go} call (the first frame outside the runtime), or
 *                   null when unknown
 */
public record GoroutineInfo(long id, String state, String waitReason, Duration waitingFor,
        Map<String, String> labels, List<StackTraceElement> stack, long parentId, StackTraceElement createdAt) {

    /**
     * What a goroutine is doing, as a snapshot can see it (Go's {@code _Grunning}, {@code
     * _Grunnable}, {@code _Gwaiting}, {@code _Gsyscall}). The runtime's internal statuses are
     * finer (G.READIED reads as RUNNING; idle and dead goroutines are not reported) and stay ints
     * on the hot path; this is their public projection, and {@link #goName()} is the string of
     * {@link GoroutineInfo#state()}, of the HTTP API and of tracebacks.
     */
    public enum State {
        /** Mounted on an M that holds a P (or readied and about to run again there). */
        RUNNING,
        /** On a run queue. */
        RUNNABLE,
        /** Parked; {@link GoroutineInfo#waitReason()} says on what. */
        WAITING,
        /** Inside {@code Go.syscall}, on an M that released its P. */
        SYSCALL;

        private static final State[] ALL = values();
        private final String goName = name().toLowerCase(java.util.Locale.ROOT);

        /** Go's word for the state: {@code "running"}, {@code "runnable"}, {@code "waiting"}, {@code "syscall"}. */
        public String goName() {
            return goName;
        }

        /**
         * The state whose {@link #goName()} is {@code name}.
         *
         * @throws IllegalArgumentException naming the accepted names, if none is
         */
        public static State of(String name) {
            for (State s : ALL) {
                if (s.goName.equals(name)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("goroutine state must be one of "
                    + java.util.Arrays.stream(ALL).map(State::goName).collect(java.util.stream.Collectors.joining(", ")) + ": " + name);
        }
    }

    /**
     * @throws IllegalArgumentException if state is not the {@link State#goName()} of a {@link State}
     */
    public GoroutineInfo {
        State.of(java.util.Objects.requireNonNull(state, "state"));
        waitReason = waitReason == null ? "" : waitReason;
        waitingFor = waitingFor == null ? Duration.ZERO : waitingFor;
        labels = labels == null ? Map.of() : labels;
        stack = stack == null ? List.of() : List.copyOf(stack);
    }

    /** As the canonical constructor, with the state as a {@link State}. */
    public GoroutineInfo(long id, State state, String waitReason, Duration waitingFor,
            Map<String, String> labels, List<StackTraceElement> stack, long parentId, StackTraceElement createdAt) {
        this(id, state.goName(), waitReason, waitingFor, labels, stack, parentId, createdAt);
    }

    /** Whether this goroutine was in {@code s} when the snapshot was taken. */
    public boolean is(State s) {
        return state.equals(s.goName());
    }
}
