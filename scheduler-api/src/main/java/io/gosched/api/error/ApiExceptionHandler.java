package io.gosched.api.error;


import io.gosched.service.error.BackendUnavailableException;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.gosched.service.error.ServiceException;
import io.gosched.service.error.Violation;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.exc.UnexpectedEndOfInputException;

import org.springframework.beans.TypeMismatchException;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.validation.FieldError;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.bind.support.WebExchangeBindException;
import org.springframework.web.method.annotation.HandlerMethodValidationException;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;

/**
 * Problem details for everything a controller throws. Boot's own
 * {@code ProblemDetailsExceptionHandler} backs off when this bean exists; this one adds what
 * the API promises on top: an {@code errors} array of JSON pointers for every field error, a
 * pointer for malformed JSON, 413 for a body over the limit, and a 500 that never shows a
 * stack trace or an exception message.
 */
@RestControllerAdvice
public class ApiExceptionHandler extends ResponseEntityExceptionHandler {

    private static final Log log = LogFactory.getLog(ApiExceptionHandler.class);

    /** The domain's one exception family, as its problem ({@link ApiProblem#of}). */
    @ExceptionHandler(ServiceException.class)
    Mono<ResponseEntity<Object>> service(ServiceException ex, ServerWebExchange exchange) {
        if (ex instanceof BackendUnavailableException) {
            log.warn("backend unavailable on " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath() + ": "
                    + ex.getMessage());
        }
        return handleException(ApiProblem.of(ex), exchange);
    }

    @ExceptionHandler(DataBufferLimitException.class)
    Mono<ResponseEntity<Object>> bufferLimit(DataBufferLimitException ex, ServerWebExchange exchange) {
        return handleException(ApiProblem.payloadTooLarge(-1).with("limit", null), exchange);
    }


    /** Anything else is our bug: answer a bare 500 and log it, never echo the exception. */
    @ExceptionHandler(Exception.class)
    Mono<ResponseEntity<Object>> unexpected(Exception ex, ServerWebExchange exchange) {
        if (ex instanceof ApiProblem || ex instanceof org.springframework.web.ErrorResponse) {
            return handleException(ex, exchange);
        }
        if (reactor.netty.channel.AbortedException.isConnectionReset(ex)
                || ex instanceof reactor.netty.channel.AbortedException) {
            // The client hung up before the answer was written: nobody is left to answer, and it
            // is not our error. Channel operations account for it themselves (see ChannelService).
            log.debug("client went away during " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath());
            return Mono.empty();
        }
        log.error("unexpected error on " + exchange.getRequest().getMethod() + " " + exchange.getRequest().getPath(), ex);
        ProblemDetail body = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, "internal error");
        body.setType(ApiProblem.type("internal"));
        return handleExceptionInternal(ex, body, new HttpHeaders(), HttpStatus.INTERNAL_SERVER_ERROR, exchange);
    }

    /**
     * Malformed JSON, wrong JSON types for a typed body, missing body: 400 naming where. A request
     * parameter that does not convert is named too: a value outside an enum's names is 422 (as a
     * constraint violation is, listing the names {@code allowed}); a value of the wrong type (a
     * number that is not one) is 400.
     */
    @Override
    protected Mono<ResponseEntity<Object>> handleServerWebInputException(ServerWebInputException ex, HttpHeaders headers,
            HttpStatusCode status, ServerWebExchange exchange) {
        if (ex.getMethodParameter() != null && ex.getCause() instanceof TypeMismatchException tm) {
            String name = parameterName(ex.getMethodParameter(), tm.getPropertyName());
            Class<?> type = tm.getRequiredType();
            if (type != null && type.isEnum()) {
                List<String> allowed = WireEnums.names(type);
                return handleException(ApiProblem.invalid("/" + Violation.escape(name),
                        "must be one of " + String.join(", ", allowed) + ", was '" + tm.getValue() + "'")
                        .with("parameter", name).with("allowed", allowed), exchange);
            }
            String detail = name + " must be " + article(type) + ", was '" + tm.getValue() + "'";
            ProblemDetail body = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, detail);
            body.setType(ApiProblem.type("malformed-request"));
            body.setTitle("Malformed request");
            body.setProperty("parameter", name);
            body.setProperty("errors", ApiProblem.errors(List.of(new Violation("/" + Violation.escape(name), detail))));
            return handleExceptionInternal(ex, body, headers, HttpStatus.BAD_REQUEST, exchange);
        }
        Violation v = inputViolation(ex);
        if (outOfRange(ex) != null) {
            // A well-formed number too large for the field: invalid, as a value out of a field's range is.
            return handleException(ApiProblem.invalid(List.of(v)), exchange);
        }
        ProblemDetail body = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                v.pointer().isEmpty() ? v.detail() : v.pointer() + ": " + v.detail());
        body.setType(ApiProblem.type("malformed-request"));
        body.setTitle("Malformed request");
        body.setProperty("errors", ApiProblem.errors(List.of(v)));
        return handleExceptionInternal(ex, body, headers, HttpStatus.BAD_REQUEST, exchange);
    }

    @Override
    protected Mono<ResponseEntity<Object>> handleWebExchangeBindException(WebExchangeBindException ex, HttpHeaders headers,
            HttpStatusCode status, ServerWebExchange exchange) {
        List<Violation> vs = new ArrayList<>();
        for (FieldError fe : ex.getFieldErrors()) {
            vs.add(new Violation(pointerOf(fe.getField()), fe.getDefaultMessage()));
        }
        ex.getGlobalErrors().forEach(ge -> vs.add(new Violation("", ge.getDefaultMessage())));
        return handleException(ApiProblem.invalid(vs.isEmpty() ? List.of(new Violation("", "invalid request")) : vs), exchange);
    }

    @Override
    protected Mono<ResponseEntity<Object>> handleHandlerMethodValidationException(HandlerMethodValidationException ex,
            HttpHeaders headers, HttpStatusCode status, ServerWebExchange exchange) {
        List<Violation> vs = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        ex.getParameterValidationResults().forEach(r -> r.getResolvableErrors().forEach(e -> {
            String name = parameterName(r.getMethodParameter(), null);
            names.add(name);
            vs.add(new Violation(name.isEmpty() ? "" : "/" + Violation.escape(name), e.getDefaultMessage()));
        }));
        ApiProblem p = ApiProblem.invalid(vs.isEmpty() ? List.of(new Violation("", "invalid request")) : vs);
        if (names.size() == 1) {
            // One bad parameter: name it and its whole range at the top level (both bounds, though
            // one was broken), so a client learns what it accepts from one answer.
            var mp = ex.getParameterValidationResults().getFirst().getMethodParameter();
            p.with("parameter", names.iterator().next());
            Min min = mp.getParameterAnnotation(Min.class);
            Max max = mp.getParameterAnnotation(Max.class);
            if (min != null) {
                p.with("min", min.value());
            }
            if (max != null) {
                p.with("max", max.value());
            }
        }
        return handleException(p, exchange);
    }

    private static String parameterName(org.springframework.core.MethodParameter mp, String fallback) {
        RequestParam rp = mp.getParameterAnnotation(RequestParam.class);
        if (rp != null && !rp.name().isEmpty()) {
            return rp.name();
        }
        String name = mp.getParameterName();
        return name != null ? name : fallback != null ? fallback : "";
    }

    private static String article(Class<?> type) {
        if (type == null) {
            return "a value of another type";
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "an integer";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == java.time.Instant.class) {
            return "an RFC 3339 instant such as 2026-01-02T03:04:05Z";
        }
        if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
            return "a number";
        }
        return "a " + type.getSimpleName();
    }

    @Override
    protected Mono<ResponseEntity<Object>> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
            HttpStatusCode status, ServerWebExchange exchange) {
        if (body == null && ex instanceof org.springframework.web.ErrorResponse er) {
            body = er.updateAndGetBody(getMessageSource(), java.util.Locale.ROOT);
        }
        if (body instanceof ProblemDetail pd) {
            ProblemWording.reword(pd, ex, exchange);
        }
        return super.handleExceptionInternal(ex, body, headers, status, exchange);
    }

    /**
     * Last stop of every answer this advice builds: each problem body gets {@code instance} (the
     * request path) and a {@code type} of ours instead of {@code about:blank}, and is written as
     * problem+json whatever the handler produces (an SSE endpoint's errors too).
     */
    @Override
    protected Mono<ResponseEntity<Object>> createResponseEntity(Object body, HttpHeaders headers, HttpStatusCode status,
            ServerWebExchange exchange) {
        if (body instanceof ProblemDetail pd) {
            if (pd.getInstance() == null) {
                pd.setInstance(URI.create(exchange.getRequest().getPath().value()));
            }
            if (pd.getType() == null || "about:blank".equals(pd.getType().toString())) {
                pd.setType(ApiProblem.type(ProblemErrorWebExceptionHandler.slug(status)));
            }
            HttpHeaders h = new HttpHeaders();
            h.addAll(headers);
            h.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
            headers = h;
            exchange.getAttributes().remove(HandlerMapping.PRODUCIBLE_MEDIA_TYPES_ATTRIBUTE);
        }
        return super.createResponseEntity(body, headers, status, exchange);
    }

    /** Where in the body reading failed, and why, worded for the client (no class names). */
    static Violation inputViolation(Throwable ex) {
        Throwable t = ex;
        while (t != null && !(t instanceof JacksonException)) {
            if (t instanceof DataBufferLimitException) {
                return new Violation("", "request body too large");
            }
            t = t.getCause();
        }
        if (t instanceof JacksonException je) {
            String pointer = pointerOf(je);
            String at = je.getLocation() == null || je.getLocation().getLineNr() < 1 ? ""
                    : " at line " + je.getLocation().getLineNr() + ", column " + je.getLocation().getColumnNr();
            String message = je.getOriginalMessage() == null ? "" : je.getOriginalMessage();
            if (je instanceof StreamConstraintsException) {
                return new Violation(pointer, ProblemWording.constraint(message));
            }
            InputCoercionException range = outOfRange(ex);
            if (range != null) {
                return new Violation(pointer, "must be an integer between " + bounds(range.getTargetType()) + ", was "
                        + numberIn(message));
            }
            if (empty(je)) {
                return new Violation("", EMPTY_BODY);
            }
            if (je instanceof UnexpectedEndOfInputException || message.contains("end-of-input")) {
                return new Violation(pointer, "the body ends" + at + " before its JSON does (cut short?): "
                        + ProblemWording.withoutJacksonOrigin(message));
            }
            String why = je instanceof StreamReadException ? "malformed JSON" : "wrong type or value";
            return new Violation(pointer, why + at + ": " + ProblemWording.withoutJacksonOrigin(message));
        }
        if (ex instanceof ServerWebInputException swe && swe.getCause() instanceof DecodingException de) {
            String m = de.getMessage() == null ? "" : de.getMessage();
            return new Violation("", m.contains("No request body") || m.contains("No content") || m.contains("end-of-input") ? EMPTY_BODY
                    : "the body is not JSON this operation reads; send a JSON object (Content-Type: application/json)");
        }
        String reason = ex instanceof ServerWebInputException swe ? swe.getReason() : null;
        if (reason != null && reason.startsWith("No request body")) {
            return new Violation("", EMPTY_BODY);
        }
        return new Violation("", reason == null ? "unreadable request" : reason);
    }

    /** What a missing body is told. */
    static final String EMPTY_BODY = "the request has no body: send a JSON object (Content-Type: application/json), see /v3/api-docs "
            + "for this operation's fields";

    private static boolean empty(JacksonException je) {
        String m = je.getOriginalMessage();
        return m != null && m.startsWith("No content to map");
    }

    /** The number-too-large error in {@code ex}'s causes, or null. */
    static InputCoercionException outOfRange(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof InputCoercionException ice) {
                return ice;
            }
        }
        return null;
    }

    private static String bounds(Class<?> type) {
        if (type == int.class || type == Integer.class) {
            return Integer.MIN_VALUE + " and " + Integer.MAX_VALUE + " (at most " + Integer.MAX_VALUE + ")";
        }
        if (type == short.class || type == Short.class) {
            return Short.MIN_VALUE + " and " + Short.MAX_VALUE + " (at most " + Short.MAX_VALUE + ")";
        }
        return Long.MIN_VALUE + " and " + Long.MAX_VALUE + " (at most " + Long.MAX_VALUE + ")";
    }

    /** Jackson's "Numeric value (12345...) out of range of ...": the number, shortened. */
    private static String numberIn(String message) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\(([-0-9.eE+]+)\\)").matcher(message);
        String n = m.find() ? m.group(1) : "larger";
        return n.length() > 40 ? n.substring(0, 40) + "..." : n;
    }

    static String pointerOf(JacksonException je) {
        if (!je.getPath().isEmpty()) {
            StringBuilder sb = new StringBuilder();
            for (JacksonException.Reference r : je.getPath()) {
                sb.append('/');
                if (r.getPropertyName() != null) {
                    sb.append(Violation.escape(r.getPropertyName()));
                } else if (r.getIndex() >= 0) {
                    sb.append(r.getIndex());
                }
            }
            return sb.toString();
        }
        if (je instanceof StreamReadException sre && sre.processor() instanceof JsonParser p && p.streamReadContext() != null) {
            return p.streamReadContext().pathAsPointer().toString();
        }
        return "";
    }

    /** {@code items[2].name} (a bean property path) to {@code /items/2/name}. */
    static String pointerOf(String field) {
        StringBuilder sb = new StringBuilder();
        for (String part : field.split("\\.")) {
            int b = part.indexOf('[');
            String name = b < 0 ? part : part.substring(0, b);
            sb.append('/').append(Violation.escape(name));
            while (b >= 0) {
                int e = part.indexOf(']', b);
                sb.append('/').append(part, b + 1, e);
                b = part.indexOf('[', e);
            }
        }
        return sb.toString();
    }
}
