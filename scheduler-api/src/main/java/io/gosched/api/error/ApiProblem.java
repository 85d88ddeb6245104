package io.gosched.api.error;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.gosched.api.workload.Violation;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * An error answer of the API as an RFC 9457 problem detail. Each factory is one error class
 * with its own {@code type} URI, so clients switch on {@code type}, never on {@code detail}.
 * Field-level errors go into an {@code errors} array of {@code {pointer, detail}} objects,
 * where {@code pointer} is an RFC 6901 JSON pointer into the request body.
 */
public final class ApiProblem extends ErrorResponseException {

    /** The base of every problem type URI; the last segment names the error class. */
    public static final String TYPE_BASE = "urn:gosched:problem:";

    private final HttpHeaders headers = new HttpHeaders();

    private ApiProblem(HttpStatus status, String type, String title, String detail) {
        super(status, ProblemDetail.forStatusAndDetail(status, detail), null);
        getBody().setType(URI.create(TYPE_BASE + type));
        getBody().setTitle(title);
    }

    @Override
    public HttpHeaders getHeaders() {
        return headers;
    }

    /** Adds an extension member to the problem body. */
    public ApiProblem with(String name, Object value) {
        getBody().setProperty(name, value);
        return this;
    }

    /** The problem type of an error class, e.g. {@code type("not-found")}. */
    public static URI type(String slug) {
        return URI.create(TYPE_BASE + slug);
    }

    /** 400/422 body member listing field errors. */
    public static List<Map<String, String>> errors(List<Violation> violations) {
        return violations.stream().map(v -> Map.of("pointer", v.pointer(), "detail", v.detail())).toList();
    }

    public static ApiProblem invalid(List<Violation> violations) {
        return (ApiProblem) new ApiProblem(HttpStatus.UNPROCESSABLE_CONTENT, "invalid-request", "Invalid request",
                violations.size() == 1 ? violations.getFirst().pointer() + ": " + violations.getFirst().detail()
                        : violations.size() + " fields are invalid; see errors")
                .with("errors", errors(violations));
    }

    public static ApiProblem invalid(String pointer, String detail) {
        return invalid(List.of(new Violation(pointer, detail)));
    }

    public static ApiProblem notFound(String what, String id) {
        return new ApiProblem(HttpStatus.NOT_FOUND, "not-found", "Not found", what + " '" + id + "' does not exist")
                .with(what.replace(' ', '_'), id);
    }

    public static ApiProblem conflict(String slug, String title, String detail) {
        return new ApiProblem(HttpStatus.CONFLICT, slug, title, detail);
    }

    /** 429: the service holds as much work as it may; try again after {@code retryAfter}. */
    public static ApiProblem overloaded(String detail, Duration retryAfter) {
        return retryAfter(new ApiProblem(HttpStatus.TOO_MANY_REQUESTS, "overloaded", "Too many requests", detail), retryAfter);
    }

    /**
     * 429: taking this request would exceed a memory budget (the service's, or one holder's share
     * of it); nothing already accepted was dropped. The caller adds the members that name the
     * budget, its size and what holds it.
     */
    public static ApiProblem budgetFull(String detail, Duration retryAfter) {
        return retryAfter(new ApiProblem(HttpStatus.TOO_MANY_REQUESTS, "memory-budget", "Memory budget full", detail), retryAfter);
    }

    /** 429: as many streams or pending calls are open as a limit allows. */
    public static ApiProblem tooManyOpen(String detail, Duration retryAfter) {
        return retryAfter(new ApiProblem(HttpStatus.TOO_MANY_REQUESTS, "too-many-open", "Too many open requests", detail), retryAfter);
    }

    private static ApiProblem retryAfter(ApiProblem p, Duration retryAfter) {
        long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
        p.headers.set(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
        return p.with("retryAfterSeconds", seconds);
    }

    /** 503: the service is shutting down and takes no new work. */
    public static ApiProblem shuttingDown() {
        ApiProblem p = new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, "shutting-down", "Shutting down",
                "the service is shutting down and accepts no new work");
        p.headers.set(HttpHeaders.RETRY_AFTER, "5");
        return p;
    }

    public static ApiProblem payloadTooLarge(long limit) {
        return new ApiProblem(HttpStatus.CONTENT_TOO_LARGE, "payload-too-large", "Request body too large",
                "the request body is larger than the limit of " + limit + " bytes").with("pointer", "").with("limit", limit);
    }

    public static ApiProblem unauthorized() {
        ApiProblem p = new ApiProblem(HttpStatus.UNAUTHORIZED, "unauthorized", "Unauthorized",
                "this call needs the header 'Authorization: Bearer <token>' with the configured token");
        p.headers.set(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"gosched\"");
        return p;
    }
}
