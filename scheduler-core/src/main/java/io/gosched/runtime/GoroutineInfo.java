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
 * @param state      Go's names: {@code "running"}, {@code "runnable"}, {@code "waiting"}, {@code "syscall"}
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

    public GoroutineInfo {
        java.util.Objects.requireNonNull(state, "state");
        waitReason = waitReason == null ? "" : waitReason;
        waitingFor = waitingFor == null ? Duration.ZERO : waitingFor;
        labels = labels == null ? Map.of() : labels;
        stack = stack == null ? List.of() : List.copyOf(stack);
    }
}
