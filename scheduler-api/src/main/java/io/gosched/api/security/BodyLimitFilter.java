package io.gosched.api.security;

import java.util.concurrent.atomic.AtomicLong;

import io.gosched.service.ServiceProperties;
import io.gosched.api.error.ApiProblem;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Refuses request bodies over {@code gosched.api.limits.max-body-bytes} with 413 before they are
 * buffered: at once when {@code Content-Length} says so, otherwise (chunked bodies) as soon as
 * the bytes read pass the limit. Set below the codecs' in-memory limit so this answer, not a
 * decoder's, is what a client sees.
 *
 * <p>It applies to every request, whatever the path: a filter that chose its paths by the raw
 * request path could be walked around by spelling the path differently ({@code /%61pi/...},
 * {@code /api;x/...}), and nothing the service serves takes a bigger body. It runs after the
 * security filter chain (order -100), so a caller without credentials learns nothing of limits.
 */
public class BodyLimitFilter implements WebFilter, Ordered {

    /** Spring Security's {@code WebFilterChainProxy} runs at this order (WebFluxSecurityConfiguration). */
    static final int SECURITY_CHAIN_ORDER = -100;

    private final long limit;

    public BodyLimitFilter(ServiceProperties properties) {
        this.limit = properties.limits().maxBodyBytes();
    }

    @Override
    public int getOrder() {
        return SECURITY_CHAIN_ORDER + 10;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        long declared = exchange.getRequest().getHeaders().getContentLength();
        if (declared > limit) {
            return Mono.error(ApiProblem.payloadTooLarge(limit));
        }
        ServerHttpRequest counted = new ServerHttpRequestDecorator(exchange.getRequest()) {
            @Override
            public Flux<DataBuffer> getBody() {
                AtomicLong seen = new AtomicLong();
                return super.getBody().handle((buf, sink) -> {
                    if (seen.addAndGet(buf.readableByteCount()) > limit) {
                        DataBufferUtils.release(buf);
                        sink.error(ApiProblem.payloadTooLarge(limit));
                    } else {
                        sink.next(buf);
                    }
                });
            }
        };
        return chain.filter(exchange.mutate().request(counted).build());
    }
}
