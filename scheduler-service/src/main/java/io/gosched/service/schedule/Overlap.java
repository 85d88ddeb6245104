package io.gosched.service.schedule;

/** What a tick does while the schedule's last job is not final yet. */
public enum Overlap {
    /** No new run: the tick is skipped (the default). */
    SKIP("skip"),
    /** A new run alongside the last one. */
    ALLOW("allow"),
    /** The last job is cancelled, then the new one submitted. */
    CANCEL_PREVIOUS("cancel-previous");

    private final String json;

    Overlap(String json) {
        this.json = json;
    }

    /** The wire name. */
    @com.fasterxml.jackson.annotation.JsonValue
    public String json() {
        return json;
    }

    /** The policy of wire name {@code s}, or null if none has it. */
    public static Overlap of(String s) {
        for (Overlap o : values()) {
            if (o.json.equals(s)) {
                return o;
            }
        }
        return null;
    }
}
