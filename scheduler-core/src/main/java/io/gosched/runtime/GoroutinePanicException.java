package io.gosched.runtime;

import java.util.Map;

/**
 * What {@link GoRuntime#run} throws when a goroutine ended by an uncaught exception under
 * {@link SchedulerConfig.PanicPolicy#CRASH}: the runtime has stopped, as a Go program stops on an
 * unrecovered panic. {@link #getCause()} is the very exception the goroutine threw.
 */
public final class GoroutinePanicException extends RuntimeException {

    private final long goid;
    private final transient Map<String, String> labels;

    GoroutinePanicException(long goid, Map<String, String> labels, Throwable cause) {
        super(message(goid, labels, cause), cause);
        this.goid = goid;
        this.labels = Map.copyOf(labels);
    }

    private static String message(long goid, Map<String, String> labels, Throwable cause) {
        return "panic in goroutine " + goid + (labels.isEmpty() ? "" : " " + labels) + ": " + cause;
    }

    /** The id of the goroutine that panicked. */
    public long goid() {
        return goid;
    }

    /** Its pprof-style labels when it panicked; empty when it had none. */
    public Map<String, String> labels() {
        return labels == null ? Map.of() : labels;
    }
}
