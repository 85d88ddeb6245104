package io.gosched.api.error;



import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;


import io.gosched.service.error.BackendFullException;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.error.ConflictException;
import io.gosched.service.error.GoneException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;
import io.gosched.service.error.ShuttingDownException;
import io.gosched.service.error.Violation;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * An error answer of the API as an RFC 9457 problem detail. Each factory is one error class
 * with its own {@code type} URI, so clients switch on {@code type}, never on {@code detail}.
 * Field-level errors go into an {@code errors} array of {@code {pointer, detail}} objects,
 * where {@code pointer} is an RFC 6901 JSON pointer into the request body.
 *
 * <p>The domain's one exception family ({@link ServiceException}) becomes a problem here and
 * nowhere else: {@link #of(ServiceException)}, one case per member of the sealed family.
 */
public final class ApiProblem extends ErrorResponseException {

    /** The base of every problem type URI; the last segment names the error class. */
    public static final String TYPE_BASE = "urn:gosched:problem:";

    /** The realm every bearer challenge names. */
    public static final String REALM = "gosched";

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

    /** 404 of its own kind: what was asked for is not there, for a reason {@code slug} names. */
    public static ApiProblem notFound(String slug, String title, String detail) {
        return new ApiProblem(HttpStatus.NOT_FOUND, slug, title, detail);
    }

    /**
     * 422 to one request parameter out of its range: {@code errors} points at it, and the body
     * names it ({@code parameter}) and its bounds ({@code min}, {@code max}), as the problem
     * handler does for a parameter its {@code @Min}/{@code @Max} constraints refused. For bounds
     * only known at run time (configured ones), where a constraint annotation cannot hold them.
     */
    public static ApiProblem parameterOutOfRange(String parameter, Object value, long min, long max) {
        return invalid("/" + Violation.escape(parameter), "must be between " + min + " and " + max + ", was '" + value + "'")
                .with("parameter", parameter).with("min", min).with("max", max);
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

    /**
     * 503: a backend the service depends on (in cluster mode: NATS) cannot be reached now; the
     * request was not carried out (for a forwarded send: its outcome is unknown).
     */
    public static ApiProblem backendUnavailable(BackendUnavailableException ex) {
        return retryAfter(new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, "backend-unavailable", "Backend unavailable",
                ex.getMessage()), ex.retryAfter()).with("backend", ex.backend());
    }

    /** 429: the backend's storage is full (a stream or bucket at its byte limit); nothing was taken. */
    public static ApiProblem backendFull(BackendFullException ex) {
        return retryAfter(new ApiProblem(HttpStatus.TOO_MANY_REQUESTS, "backend-full", "Backend full", ex.getMessage()),
                ex.retryAfter()).with("backend", ex.backend());
    }

    /**
     * The problem of a domain exception: its status and type by the member of the family it is
     * (and its reason), its message as the detail, {@code Retry-After} where trying again makes
     * sense, and its members as extension members after {@code retryAfterSeconds}.
     */
    public static ApiProblem of(ServiceException ex) {
        ApiProblem p = switch (ex) {
            case NotFoundException nf -> new ApiProblem(HttpStatus.NOT_FOUND, "not-found", "Not found", nf.getMessage());
            case ConflictException c -> new ApiProblem(HttpStatus.CONFLICT, c.reason().code(), c.reason().title(), c.getMessage());
            case GoneException g -> new ApiProblem(HttpStatus.GONE, GoneException.CHANNEL_LOST, GoneException.CHANNEL_LOST_TITLE, g.getMessage());
            case RefusedException r -> retryAfter(new ApiProblem(HttpStatus.TOO_MANY_REQUESTS, r.reason().code(), r.reason().title(),
                    r.getMessage()), r.retryAfter());
            case ShuttingDownException s -> shuttingDown();
            case BackendUnavailableException u -> backendUnavailable(u);
            case BackendFullException f -> backendFull(f);
            case InvalidRequestException i -> invalid(i.violations());
        };
        ex.members().forEach(p::with);
        return p;
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

    /**
     * 401 to a call without credentials. RFC 6750 section 3.1: a challenge without an error code,
     * since the client may simply not know the resource is protected.
     */
    public static ApiProblem unauthorized() {
        ApiProblem p = new ApiProblem(HttpStatus.UNAUTHORIZED, "unauthorized", "Unauthorized",
                "this call needs the header 'Authorization: Bearer <token>'");
        p.headers.set(HttpHeaders.WWW_AUTHENTICATE, bearerChallenge(null, null, null));
        return p;
    }

    /** 401 to a token that is not valid: wrong, expired, signed by another key, for another audience. */
    public static ApiProblem invalidToken(String description) {
        ApiProblem p = new ApiProblem(HttpStatus.UNAUTHORIZED, "invalid-token", "Invalid token", description);
        p.headers.set(HttpHeaders.WWW_AUTHENTICATE, bearerChallenge("invalid_token", description, null));
        return p;
    }

    /** 400 to an {@code Authorization} header (or token) that is not a well-formed bearer token request. */
    public static ApiProblem malformedAuthorization(String description) {
        ApiProblem p = new ApiProblem(HttpStatus.BAD_REQUEST, "malformed-request", "Malformed request", description);
        p.headers.set(HttpHeaders.WWW_AUTHENTICATE, bearerChallenge("invalid_request", description, null));
        return p;
    }

    /**
     * 403 to a valid token without a scope the call needs. {@code allOf} lists sets of scopes: the
     * call needs one scope of every set (usually one set, any scope of which will do). The body's
     * {@code scopes} names them all; the challenge's {@code scope} attribute (RFC 6750: every scope
     * listed is needed) is given when each set holds a single scope.
     */
    public static ApiProblem insufficientScope(List<List<String>> allOf) {
        List<String> parts = allOf.stream()
                .map(set -> set.size() == 1 ? "the scope " + set.getFirst() : "one of the scopes " + String.join(", ", set))
                .toList();
        String detail = parts.isEmpty() ? "this call is not allowed with this token"
                : "this call needs a token with " + String.join(" and ", parts);
        boolean singletons = !allOf.isEmpty() && allOf.stream().allMatch(set -> set.size() == 1);
        ApiProblem p = new ApiProblem(HttpStatus.FORBIDDEN, "insufficient-scope", "Insufficient scope", detail);
        p.headers.set(HttpHeaders.WWW_AUTHENTICATE, bearerChallenge("insufficient_scope", detail,
                singletons ? String.join(" ", allOf.stream().map(List::getFirst).toList()) : null));
        return p.with("scopes", allOf.stream().flatMap(List::stream).distinct().toList());
    }

    /**
     * 400 to a request the firewall refuses before any rule or route sees it: an encoded {@code /}
     * or {@code .}, a {@code ;} parameter, {@code //}, {@code .} or {@code ..} segments, control
     * characters, a method outside the seven HTTP ones.
     */
    public static ApiProblem rejectedRequest(String reason) {
        return new ApiProblem(HttpStatus.BAD_REQUEST, "rejected-request", "Request rejected", reason);
    }

    /** 503: tokens cannot be checked because the identity provider (its JWK set) cannot be reached. */
    public static ApiProblem identityProviderUnavailable() {
        ApiProblem p = new ApiProblem(HttpStatus.SERVICE_UNAVAILABLE, "identity-provider-unavailable",
                "Identity provider unavailable", "the token cannot be checked now: the identity provider's keys cannot be fetched");
        p.headers.set(HttpHeaders.RETRY_AFTER, "5");
        return p;
    }

    /**
     * An RFC 6750 section 3 challenge: {@code Bearer realm="gosched"} plus the error attributes
     * given. Attribute values may not hold {@code "} or {@code \} (nor anything outside printable
     * ASCII), so those become {@code '} and {@code ?}.
     */
    static String bearerChallenge(String error, String description, String scope) {
        StringBuilder sb = new StringBuilder("Bearer realm=\"").append(REALM).append('"');
        if (error != null) {
            sb.append(", error=\"").append(error).append('"');
        }
        if (description != null) {
            sb.append(", error_description=\"").append(challengeText(description)).append('"');
        }
        if (scope != null) {
            sb.append(", scope=\"").append(challengeText(scope)).append('"');
        }
        return sb.toString();
    }

    private static String challengeText(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(c == '"' || c == '\\' ? '\'' : c < 0x20 || c > 0x7e ? '?' : c);
        }
        return sb.toString();
    }
}
