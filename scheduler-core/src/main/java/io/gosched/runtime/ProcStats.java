package io.gosched.runtime;

import java.util.Locale;
import java.util.Objects;

/**
 * One P as {@code GODEBUG=scheddetail} shows it. Ids are -1 where there is none.
 *
 * @param status the {@link Status#goName()} of a {@link Status}: idle, running, syscall, gcstop or dead
 */
public record ProcStats(int id, String status, long schedtick, long syscalltick, int runqueue,
                        long runnextGoid, long currentGoid, int mId, int timers) {

    /**
     * A P's status (Go's {@code _Pidle}, {@code _Prunning}, ...). The runtime keeps it as an int on
     * the hot path (P.IDLE ...); {@link #ofCode} decodes one, and {@link #goName()} is how
     * schedtrace, {@link ProcStats#status()}, the metrics' {@code state} tag and the HTTP API
     * spell it.
     */
    public enum Status {
        /** Held by no M; on the idle list. */
        IDLE(P.IDLE),
        /** Held by an M running goroutines or the scheduler. */
        RUNNING(P.RUNNING),
        /** Its M is in a syscall; sysmon may retake it. */
        SYSCALL(P.SYSCALL),
        /** Stopped for a stop-the-world (procresize). */
        GCSTOP(P.GCSTOP),
        /** Beyond GOMAXPROCS, kept for reuse. */
        DEAD(P.DEAD);

        private static final Status[] BY_CODE = values();

        static {
            for (Status s : BY_CODE) {
                if (s.code != s.ordinal()) { // ofCode indexes BY_CODE by P's int status
                    throw new ExceptionInInitializerError("ProcStats.Status " + s + " has code " + s.code + ", ordinal " + s.ordinal());
                }
            }
        }

        private final int code;
        private final String goName = name().toLowerCase(Locale.ROOT);

        Status(int code) {
            this.code = code;
        }

        /** Go's word for the status, lower case: {@code "idle"}, {@code "running"}, ... */
        public String goName() {
            return goName;
        }

        /** The runtime's int for this status (P.IDLE ...). */
        int code() {
            return code;
        }

        /**
         * The status the runtime stores as {@code code}.
         *
         * @throws IllegalArgumentException if none is
         */
        static Status ofCode(int code) {
            if (code < 0 || code >= BY_CODE.length) {
                throw new IllegalArgumentException("no P status has code " + code);
            }
            return BY_CODE[code];
        }

        /**
         * The status whose {@link #goName()} is {@code name}.
         *
         * @throws IllegalArgumentException if none is
         */
        public static Status of(String name) {
            for (Status s : BY_CODE) {
                if (s.goName.equals(name)) {
                    return s;
                }
            }
            throw new IllegalArgumentException("P status must be one of "
                    + java.util.Arrays.stream(BY_CODE).map(Status::goName).collect(java.util.stream.Collectors.joining(", ")) + ": " + name);
        }
    }

    /**
     * @throws IllegalArgumentException if status is not the {@link Status#goName()} of a {@link Status}
     */
    public ProcStats {
        Status.of(Objects.requireNonNull(status, "status"));
    }

    /** As the canonical constructor, with the status as a {@link Status}. */
    public ProcStats(int id, Status status, long schedtick, long syscalltick, int runqueue,
                     long runnextGoid, long currentGoid, int mId, int timers) {
        this(id, status.goName(), schedtick, syscalltick, runqueue, runnextGoid, currentGoid, mId, timers);
    }

    /** Whether this P was in {@code s} when the snapshot was taken. */
    public boolean is(Status s) {
        return status.equals(s.goName());
    }
}
