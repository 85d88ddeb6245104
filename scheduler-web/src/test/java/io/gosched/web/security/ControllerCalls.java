package io.gosched.web.security;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerAdapter;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;

/**
 * Records every call the dispatcher hands to a controller method, after the whole filter chain
 * (security included) let the request through: a {@link HandlerAdapter} ahead of Spring's own,
 * which notes the controller method and then delegates to {@link RequestMappingHandlerAdapter}.
 * It sees a call before argument binding or validation, so a request that reaches a controller
 * is recorded even when the controller then refuses it.
 */
public final class ControllerCalls {

    /** One call: the controller method and the request as it arrived. */
    public record Call(String method, String rawPath, String handler) {}

    private final List<Call> calls = new CopyOnWriteArrayList<>();

    public List<Call> drain() {
        List<Call> out = List.copyOf(calls);
        calls.clear();
        return out;
    }

    void record(ServerWebExchange exchange, HandlerMethod handler) {
        calls.add(new Call(exchange.getRequest().getMethod().name(), exchange.getRequest().getURI().getRawPath(),
                handler.getBeanType().getSimpleName() + "." + handler.getMethod().getName()));
    }

    /** Import into a test to install the recorder. */
    @TestConfiguration(proxyBeanMethods = false)
    public static class Recorder {

        @Bean
        ControllerCalls controllerCalls() {
            return new ControllerCalls();
        }

        @Bean
        HandlerAdapter recordingHandlerAdapter(ControllerCalls calls, RequestMappingHandlerAdapter delegate) {
            return new Recording(calls, delegate);
        }
    }

    private record Recording(ControllerCalls calls, RequestMappingHandlerAdapter delegate) implements HandlerAdapter, Ordered {

        @Override
        public boolean supports(Object handler) {
            return handler instanceof HandlerMethod;
        }

        @Override
        public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
            calls.record(exchange, (HandlerMethod) handler);
            return delegate.handle(exchange, handler);
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }
}
