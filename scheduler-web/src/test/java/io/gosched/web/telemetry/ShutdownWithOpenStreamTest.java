package io.gosched.web.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.GoschedApplication;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * Graceful shutdown counts an open SSE response as in-flight and would wait the whole
 * {@code timeout-per-shutdown-phase} for it; completing the streams on ContextClosedEvent must let
 * the service stop at once with a browser still attached.
 */
class ShutdownWithOpenStreamTest {

    @Test
    void closingTheContextIsNotHeldByAnOpenStream() throws Exception {
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(GoschedApplication.class)
                .properties("server.port=0", "spring.lifecycle.timeout-per-shutdown-phase=30s")
                .run();
        CountDownLatch firstEvent = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        Disposable client;
        try {
            String port = ctx.getEnvironment().getProperty("local.server.port");
            client = WebClient.create("http://127.0.0.1:" + port).get().uri("/api/v1/telemetry/stream?intervalMs=100")
                    .accept(MediaType.TEXT_EVENT_STREAM).retrieve().bodyToFlux(String.class)
                    .doOnNext(s -> firstEvent.countDown())
                    .doFinally(signal -> ended.countDown())
                    .subscribe(s -> {}, e -> {});
            assertThat(firstEvent.await(20, TimeUnit.SECONDS)).as("stream delivered a snapshot").isTrue();
        } catch (Throwable t) {
            ctx.close();
            throw t;
        }
        long start = System.nanoTime();
        ctx.close();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("shutdown with an open stream").isLessThan(Duration.ofSeconds(10));
        assertThat(ended.await(5, TimeUnit.SECONDS)).as("the client saw its stream end").isTrue();
        client.dispose();
    }
}
