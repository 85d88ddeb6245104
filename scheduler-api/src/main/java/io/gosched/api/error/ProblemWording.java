package io.gosched.api.error;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.reactive.resource.NoResourceFoundException;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.NotAcceptableStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

/**
 * The details of the framework's own refusals (no route, a method, an Accept or a Content-Type the
 * operation does not take), worded for the client: what was wrong and what to send instead, with
 * the alternatives as members ({@code allowed}, {@code supported}). Spring's wording speaks of its
 * own machinery ("No static resource api/v1/nothing."); the status and the problem type stay.
 */
final class ProblemWording {

    /** The API's operations are listed there; named in a 404 for a path nothing answers. */
    static final String API_DOCS = "/v3/api-docs";

    private static final Pattern JACKSON_ORIGIN = Pattern.compile(",? from `[^`]*`");

    private ProblemWording() {
    }

    /** Rewrites {@code body}'s detail (and adds members) for the refusals above; leaves others as they are. */
    static void reword(ProblemDetail body, Throwable ex, ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().value();
        switch (ex) {
            case NoResourceFoundException nf -> body.setDetail("nothing is at " + shorten(path) + ": the API's operations are listed at "
                    + API_DOCS + " (the API is under /api/v1)");
            case MethodNotAllowedException mna -> {
                List<String> allowed = mna.getSupportedMethods().stream().map(HttpMethod::name).sorted().toList();
                body.setDetail(mna.getHttpMethod() + " is not allowed on " + shorten(path) + ": use " + String.join(" or ", allowed));
                body.setProperty("allowed", allowed);
            }
            case NotAcceptableStatusException na -> {
                List<String> supported = na.getSupportedMediaTypes().stream().map(MediaType::toString).toList();
                String accept = exchange.getRequest().getHeaders().getFirst("Accept");
                body.setDetail("this operation answers in none of the types Accept names (" + (accept == null ? "" : shorten(accept))
                        + "): send Accept: " + (supported.isEmpty() ? "*/*" : supported.getFirst()) + " (or */*)");
                body.setProperty("supported", supported);
            }
            case UnsupportedMediaTypeStatusException ums -> unsupported(body, ums.getSupportedMediaTypes(),
                    exchange.getRequest().getHeaders().getFirst("Content-Type"));
            default -> {
                // A form body reaches a JSON operation as a bare 415 (the form reader's), with no detail.
                if (body.getStatus() == 415) {
                    unsupported(body, List.of(), exchange.getRequest().getHeaders().getFirst("Content-Type"));
                }
            }
        }
    }

    private static void unsupported(ProblemDetail body, List<MediaType> types, String sent) {
        List<String> supported = types.isEmpty() ? List.of(MediaType.APPLICATION_JSON_VALUE) : types.stream().map(MediaType::toString).toList();
        String want = supported.contains(MediaType.APPLICATION_JSON_VALUE) ? MediaType.APPLICATION_JSON_VALUE : supported.getFirst();
        body.setDetail((sent == null || sent.isBlank() ? "the request has a body but no Content-Type"
                : "a body of Content-Type " + shorten(sent) + " is not read here")
                + ": send it as " + want + " (Content-Type: " + want + ")");
        body.setProperty("supported", supported);
    }

    /** Jackson names the method that holds a limit ("from `StreamReadConstraints.getMaxNestingDepth()`"): not the client's business. */
    static String withoutJacksonOrigin(String message) {
        return message == null ? null : JACKSON_ORIGIN.matcher(message).replaceAll("");
    }

    /** A stream constraint (nesting depth, number or string length) worded as the limit it is. */
    static String constraint(String message) {
        Matcher depth = Pattern.compile("nesting depth \\((\\d+)\\) exceeds the maximum allowed \\((\\d+)").matcher(message);
        if (depth.find()) {
            return "the JSON nests arrays and objects " + depth.group(1) + " deep, more than the " + depth.group(2)
                    + " allowed: send at most " + depth.group(2) + " levels";
        }
        return withoutJacksonOrigin(message);
    }

    private static String shorten(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
