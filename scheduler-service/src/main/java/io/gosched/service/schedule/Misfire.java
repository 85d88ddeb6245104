package io.gosched.service.schedule;

/**
 * What becomes of ticks nobody fired in time (no node ran, or none could reach the store): a tick
 * is missed once it is more than {@link ScheduleFiring#MISFIRE_GRACE} old when a node gets to it.
 */
public enum Misfire {
    /** Missed ticks make no job; they are counted as misfires (the default). */
    SKIP("skip"),
    /** The missed ticks make one job together, for the latest of them. */
    RUN_ONCE("run-once");

    private final String json;

    Misfire(String json) {
        this.json = json;
    }

    /** The wire name. */
    @com.fasterxml.jackson.annotation.JsonValue
    public String json() {
        return json;
    }

    /** The policy of wire name {@code s}, or null if none has it. */
    public static Misfire of(String s) {
        for (Misfire m : values()) {
            if (m.json.equals(s)) {
                return m;
            }
        }
        return null;
    }
}
