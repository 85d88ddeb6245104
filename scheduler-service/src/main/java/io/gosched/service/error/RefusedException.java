package io.gosched.service.error;

import java.time.Duration;
import java.util.Objects;

/**
 * Taking the request would go past a bound the service keeps so that memory cannot run out;
 * nothing already accepted was dropped, and the same request may succeed after
 * {@link #retryAfter()}.
 */
public final class RefusedException extends ServiceException {

    /** Which bound refused, with its code (the last segment of the problem's type) and its title. */
    public enum Reason {
        /** As many jobs wait, or channels exist, as the service takes. */
        OVERLOADED("overloaded", "Too many requests"),
        /** The memory budget, or one holder's share of it, has no room; the members name the budget, its size and what holds it. */
        MEMORY_BUDGET("memory-budget", "Memory budget full"),
        /** As many streams or pending calls are open as a limit allows. */
        TOO_MANY_OPEN("too-many-open", "Too many open requests");

        private final String code;
        private final String title;

        Reason(String code, String title) {
            this.code = code;
            this.title = title;
        }

        public String code() {
            return code;
        }

        public String title() {
            return title;
        }
    }

    private final Reason reason;
    private final Duration retryAfter;

    public RefusedException(Reason reason, String message, Duration retryAfter) {
        super(message);
        this.reason = Objects.requireNonNull(reason);
        this.retryAfter = Objects.requireNonNull(retryAfter);
    }

    public Reason reason() {
        return reason;
    }

    /** When trying again makes sense. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
