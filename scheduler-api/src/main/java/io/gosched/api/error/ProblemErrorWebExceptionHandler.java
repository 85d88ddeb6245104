package io.gosched.api.error;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.gosched.service.error.ServiceException;
import io.gosched.service.error.Violation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Problem details for errors no controller saw: a web filter's refusal (401, 413), no handler
 * for the path (404), a method not allowed, a body that failed while a filter read it. Ordered
 * before Boot's {@code DefaultErrorWebExceptionHandler} (order -1), which would answer with its
 * own JSON shape instead of RFC 9457.
 */
public class ProblemErrorWebExceptionHandler implements WebExceptionHandler, Ordered {

    private static final Log log = LogFactory.getLog(ProblemErrorWebExceptionHandler.class);

    private final JsonMapper json;

    public ProblemErrorWebExceptionHandler(JsonMapper json) {
        this.json = json;
    }

    @Override
    public int getOrder() {
        return -2;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(ex); // too late to answer; let the server close the connection
        }
        ProblemDetail body;
        if (ex instanceof ServiceException se) {
            ex = ApiProblem.of(se); // a domain refusal raised outside a controller (a filter, a stream's subscription)
        }
        if (ex instanceof ApiProblem p) {
            body = p.getBody();
            response.getHeaders().addAll(p.getHeaders());
        } else if (ex instanceof ServerWebInputException swe) {
            Violation v = ApiExceptionHandler.inputViolation(swe);
            body = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, v.detail());
            body.setType(ApiProblem.type("malformed-request"));
            body.setTitle("Malformed request");
            body.setProperty("errors", ApiProblem.errors(List.of(v)));
        } else if (ex instanceof DataBufferLimitException) {
            body = ApiProblem.payloadTooLarge(-1).getBody();
        } else if (ex instanceof ErrorResponse er) {
            body = er.getBody();
            response.getHeaders().addAll(er.getHeaders());
            if (body.getType() == null || "about:blank".equals(body.getType().toString())) {
                body.setType(ApiProblem.type(slug(HttpStatusCode.valueOf(body.getStatus()))));
            }
            if (body.getDetail() == null) {
                body.setDetail(body.getTitle());
            }
            ProblemWording.reword(body, ex, exchange);
        } else {
            log.error("unexpected error outside a controller on " + exchange.getRequest().getPath(), ex);
            body = ProblemDetail.forStatusAndDetail(HttpStatus.INTERNAL_SERVER_ERROR, "internal error");
            body.setType(ApiProblem.type("internal"));
        }
        if (body.getInstance() == null) {
            body.setInstance(URI.create(exchange.getRequest().getPath().value()));
        }
        response.setStatusCode(HttpStatusCode.valueOf(body.getStatus()));
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] bytes = json.writeValueAsBytes(toMap(body));
        DataBuffer buffer = response.bufferFactory().wrap(bytes);
        return response.writeWith(Mono.just(buffer));
    }

    /** RFC 9457 members first, extension members after, as the RFC lays the object out. */
    static Map<String, Object> toMap(ProblemDetail pd) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", pd.getType() == null ? "about:blank" : pd.getType().toString());
        m.put("title", pd.getTitle());
        m.put("status", pd.getStatus());
        m.put("detail", pd.getDetail());
        if (pd.getInstance() != null) {
            m.put("instance", pd.getInstance().toString());
        }
        if (pd.getProperties() != null) {
            m.putAll(pd.getProperties());
        }
        return m;
    }

    static String slug(HttpStatusCode status) {
        HttpStatus s = HttpStatus.resolve(status.value());
        return s == null ? "http-" + status.value() : s.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

}
