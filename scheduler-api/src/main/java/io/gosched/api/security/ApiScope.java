package io.gosched.api.security;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * The OAuth2 scopes of the API, named after what a client does. A JWT carries them in its
 * {@code scope} (space-separated) or {@code scp} claim; the static token holds all of them.
 */
public enum ApiScope {

    /** Read jobs: list, state, result, events, goroutines of a job; the workload catalogue. */
    JOBS_READ("jobs:read", "Read jobs, their results, events and goroutines, and the workload catalogue"),
    /** Submit, cancel and retry jobs. */
    JOBS_WRITE("jobs:write", "Submit, cancel and retry jobs"),
    /** Read named channels. */
    CHANNELS_READ("channels:read", "Read named channels"),
    /** Create, send to, receive from, select over, close and delete named channels. */
    CHANNELS_WRITE("channels:write", "Create, send to, receive from, select over, close and delete named channels"),
    /** Control and inspect the runtime: GOMAXPROCS, traces, the flight recorder, goroutine dumps, debug endpoints. */
    SCHEDULER_ADMIN("scheduler:admin",
            "Control and inspect the runtime: GOMAXPROCS, schedtrace, traces, the flight recorder, goroutine dumps, every debug endpoint");

    /** Every scope: what the static token holds, and "any one of them" for the scheduler's own statistics. */
    public static final Set<ApiScope> ALL = Collections.unmodifiableSet(EnumSet.allOf(ApiScope.class));

    private final String value;
    private final String description;

    ApiScope(String value, String description) {
        this.value = value;
        this.description = description;
    }

    /** The scope as a token carries it, e.g. {@code jobs:read}. */
    public String value() {
        return value;
    }

    /** One line for the OpenAPI document. */
    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return value;
    }
}
