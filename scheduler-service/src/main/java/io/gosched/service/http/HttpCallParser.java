package io.gosched.service.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import io.gosched.service.error.Violation;
import io.gosched.service.workload.JsonInput;
import tools.jackson.databind.JsonNode;

/**
 * Reads the {@code "http"} member of a job body:
 * <pre>
 * { "method": "POST"?, "url": "https://...", "headers": {"name": "value", ...}?,
 *   "body": any JSON (sent as JSON) or a string (sent as text)?, "timeoutMs": n? }
 * </pre>
 * Every violation is collected with its JSON pointer; a target outside
 * {@value HttpTargets#ALLOWED_TARGETS} is refused here, at submission, never at run time.
 * Thread-safe.
 */
public final class HttpCallParser {

    static final Set<String> FIELDS = Set.of("method", "url", "headers", "body", "timeoutMs");
    static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE");
    static final int MAX_HEADERS = 64;
    static final int MAX_HEADER_VALUE = 8 * 1024;
    static final int MAX_URL = 8 * 1024;
    /** Set by the service on every attempt, so that a target can deduplicate at-least-once delivery. */
    public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    public static final String ATTEMPT = "Gosched-Attempt";
    /** Headers the client may not set: the service's own, and those the connection owns. */
    static final Set<String> RESERVED = Set.of("idempotency-key", "gosched-attempt", "host", "content-length", "connection",
            "upgrade", "expect", "transfer-encoding", "te", "keep-alive", "proxy-connection", "http2-settings");
    /** RFC 9110 token. */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    private final HttpTargets targets;
    private final HttpJobProperties properties;

    public HttpCallParser(HttpTargets targets, HttpJobProperties properties) {
        this.targets = targets;
        this.properties = properties;
    }

    /**
     * @param pointer       where {@code node} is in the request ({@code /http})
     * @param jobTimeoutMs  the job's own deadline per attempt: the call's timeout may not exceed it
     * @return the call, or null with violations recorded in {@code in}
     */
    public HttpCall parse(JsonNode node, String pointer, long jobTimeoutMs, JsonInput in) {
        if (!in.object(node, pointer)) {
            return null;
        }
        int before = in.violations().size();
        in.onlyFields(node, pointer, FIELDS);
        String method = in.string(node, pointer, "method", false);
        if (method == null) {
            method = "POST";
        } else if (!METHODS.contains(method)) {
            in.violation(pointer + "/method", "must be one of GET, HEAD, POST, PUT, PATCH, DELETE (upper case), was '"
                    + abbreviate(method) + "'");
        }
        URI url = url(node, pointer, in);
        Map<String, String> headers = headers(node.get("headers"), pointer + "/headers", in);
        JsonNode body = node.get("body");
        if (body != null && body.isNull()) {
            body = null;
        }
        if (body != null && ("GET".equals(method) || "HEAD".equals(method))) {
            in.violation(pointer + "/body", "a " + method + " request carries no body");
        }
        long fallback = Math.min(properties.defaultTimeoutMs(), jobTimeoutMs);
        long timeoutMs = in.integer(node, pointer, "timeoutMs", 1, Long.MAX_VALUE, fallback, false);
        if (timeoutMs > jobTimeoutMs) {
            in.violation(pointer + "/timeoutMs", "must be at most the job's own timeoutMs (" + jobTimeoutMs + "), was " + timeoutMs);
        }
        if (in.violations().size() > before) {
            return null;
        }
        return new HttpCall(method, url, headers, body, timeoutMs);
    }

    private URI url(JsonNode node, String pointer, JsonInput in) {
        String text = in.string(node, pointer, "url", true);
        if (text == null) {
            return null;
        }
        String at = pointer + "/url";
        if (text.length() > MAX_URL) {
            in.violation(at, "must be at most " + MAX_URL + " characters");
            return null;
        }
        URI url;
        try {
            url = new URI(text).normalize();
        } catch (URISyntaxException e) {
            in.violation(at, "is not a URL: " + e.getReason());
            return null;
        }
        Optional<String> refusal = targets.refusal(url);
        if (refusal.isPresent()) {
            in.violation(at, refusal.get());
            return null;
        }
        return url;
    }

    private static Map<String, String> headers(JsonNode h, String at, JsonInput in) {
        Map<String, String> out = new LinkedHashMap<>();
        if (h == null || h.isNull() || !in.object(h, at)) {
            return out;
        }
        if (h.size() > MAX_HEADERS) {
            in.violation(at, "must have at most " + MAX_HEADERS + " headers, had " + h.size());
            return out;
        }
        for (String name : h.propertyNames()) {
            String p = at + "/" + Violation.escape(name);
            JsonNode v = h.get(name);
            if (!TOKEN.matcher(name).matches()) {
                in.violation(p, "is not a valid header name");
            } else if (RESERVED.contains(name.toLowerCase(Locale.ROOT))) {
                in.violation(p, "is set by the service or the connection, not by a job");
            } else if (v == null || !v.isString()) {
                in.violation(p, "must be a string, was " + JsonInput.kind(v));
            } else if (v.stringValue().length() > MAX_HEADER_VALUE) {
                in.violation(p, "must be at most " + MAX_HEADER_VALUE + " characters");
            } else if (v.stringValue().chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
                in.violation(p, "must not contain CR, LF or NUL");
            } else {
                out.put(name, v.stringValue());
            }
        }
        return out;
    }

    private static String abbreviate(String s) {
        return s.length() <= 20 ? s : s.substring(0, 20) + "…";
    }
}
