package io.gosched.service.workload;

import io.gosched.service.channel.ChannelName;

import io.gosched.service.error.InvalidRequestException;

import io.gosched.service.error.Violation;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;

/**
 * Reads a request tree field by field and collects, instead of throwing at the first one,
 * every {@link Violation} with the JSON pointer of the offending field. The DSL parser and
 * the job request parser both read through one of these, so "wrong type", "out of range" and
 * "unknown field" are worded the same everywhere.
 *
 * <p>Not thread-safe: one instance per request.
 */
public final class JsonInput {

    /** Names of channels, templates and the like: short, printable, safe in a URL path segment. */
    public static final Pattern NAME = ChannelName.PATTERN;

    private final List<Violation> violations = new ArrayList<>();

    public void violation(String pointer, String detail) {
        violations.add(new Violation(pointer, detail));
    }

    public List<Violation> violations() {
        return violations;
    }

    public boolean ok() {
        return violations.isEmpty();
    }

    /** Throws {@link InvalidRequestException} carrying every violation seen, if any. */
    public void throwIfInvalid() {
        if (!violations.isEmpty()) {
            throw new InvalidRequestException(violations);
        }
    }

    /** True if {@code node} is an object; otherwise records a violation at {@code pointer}. */
    public boolean object(JsonNode node, String pointer) {
        if (node == null || !node.isObject()) {
            violation(pointer, "must be a JSON object, was " + kind(node));
            return false;
        }
        return true;
    }

    /** Records a violation for every property of {@code node} not in {@code allowed}. */
    public void onlyFields(JsonNode node, String pointer, Set<String> allowed) {
        for (String name : node.propertyNames()) {
            if (!allowed.contains(name)) {
                violation(pointer + "/" + Violation.escape(name), "unknown field (allowed: " + String.join(", ", sorted(allowed)) + ")");
            }
        }
    }

    /**
     * An integral field in {@code [min, max]}; {@code fallback} when absent or JSON null, or a
     * violation and {@code fallback} when present but wrong.
     */
    public long integer(JsonNode parent, String pointer, String field, long min, long max, long fallback, boolean required) {
        JsonNode v = parent.get(field);
        String at = pointer + "/" + Violation.escape(field);
        if (v == null || v.isNull()) {
            if (required) {
                violation(at, "is required");
            }
            return fallback;
        }
        if (v.isNumber() && v.canConvertToExactIntegral() && !v.canConvertToLong()) {
            // An integer past a long: say which bounds hold, not what it is ("an integer").
            violation(at, "must be between " + min + " and " + max + ", was " + v.bigIntegerValue() + " (an integer here is at most "
                    + Long.MAX_VALUE + ")");
            return fallback;
        }
        if (!v.isNumber() || !v.canConvertToExactIntegral()) {
            violation(at, "must be an integer, was " + kind(v));
            return fallback;
        }
        long x = v.longValue();
        if (x < min || x > max) {
            violation(at, "must be between " + min + " and " + max + ", was " + x);
            return fallback;
        }
        return x;
    }

    /** A number field in {@code [min, max]} (integers allowed); {@code fallback} when absent. */
    public double number(JsonNode parent, String pointer, String field, double min, double max, double fallback) {
        JsonNode v = parent.get(field);
        String at = pointer + "/" + Violation.escape(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isNumber()) {
            violation(at, "must be a number, was " + kind(v));
            return fallback;
        }
        double x = v.doubleValue();
        if (!(x >= min && x <= max)) {
            violation(at, "must be between " + min + " and " + max + ", was " + v);
            return fallback;
        }
        return x;
    }

    /** A string field, or {@code null} (with a violation when {@code required}). */
    public String string(JsonNode parent, String pointer, String field, boolean required) {
        JsonNode v = parent.get(field);
        String at = pointer + "/" + Violation.escape(field);
        if (v == null || v.isNull()) {
            if (required) {
                violation(at, "is required");
            }
            return null;
        }
        if (!v.isString()) {
            violation(at, "must be a string, was " + kind(v));
            return null;
        }
        return v.stringValue();
    }

    /** A name matching {@link #NAME}, or {@code null} with a violation. */
    public String name(JsonNode parent, String pointer, String field, boolean required) {
        String s = string(parent, pointer, field, required);
        if (s != null && !NAME.matcher(s).matches()) {
            violation(pointer + "/" + Violation.escape(field), "must match " + NAME.pattern());
            return null;
        }
        return s;
    }

    /** A boolean field, {@code fallback} when absent. */
    public boolean bool(JsonNode parent, String pointer, String field, boolean fallback) {
        JsonNode v = parent.get(field);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isBoolean()) {
            violation(pointer + "/" + Violation.escape(field), "must be a boolean, was " + kind(v));
            return fallback;
        }
        return v.booleanValue();
    }

    /** An array field with {@code min..max} elements, or {@code null} with a violation. */
    public JsonNode array(JsonNode parent, String pointer, String field, int min, int max, boolean required) {
        JsonNode v = parent.get(field);
        String at = pointer + "/" + Violation.escape(field);
        if (v == null || v.isNull()) {
            if (required) {
                violation(at, "is required");
            }
            return null;
        }
        if (!v.isArray()) {
            violation(at, "must be an array, was " + kind(v));
            return null;
        }
        if (v.size() < min || v.size() > max) {
            violation(at, "must have between " + min + " and " + max + " elements, had " + v.size());
            return null;
        }
        return v;
    }

    /** A JSON type word for messages: what the client sent, never its content. */
    public static String kind(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "missing";
        }
        if (node.isNull()) {
            return "null";
        }
        if (node.isObject()) {
            return "an object";
        }
        if (node.isArray()) {
            return "an array";
        }
        if (node.isString()) {
            return "a string";
        }
        if (node.isBoolean()) {
            return "a boolean";
        }
        if (node.isIntegralNumber()) {
            return "an integer";
        }
        if (node.isNumber()) {
            return "a number";
        }
        return "a " + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }

    private static List<String> sorted(Set<String> s) {
        return s.stream().sorted().toList();
    }
}
