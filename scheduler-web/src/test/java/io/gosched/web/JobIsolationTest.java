package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The service's runtime does not follow Go's CRASH policy: one goroutine's uncaught exception
 * must not end the runtime every job shares. (Same context as FlightControllerTest: cached.)
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"gosched.runtime.gomaxprocs=2", "gosched.trace.flight.window=3s", "gosched.trace.flight.min-interval=0s",
            "gosched.trace.flight.keep=64"})
@AutoConfigureWebTestClient
class JobIsolationTest {

    @Autowired
    GoRuntime runtime;

    @Autowired
    WebTestClient client;

    @Test
    void aGoroutineThatThrowsDoesNotEndTheService() throws Exception {
        assertThat(runtime.config().panicPolicy()).isEqualTo(SchedulerConfig.PanicPolicy.LOG);
        CountDownLatch thrown = new CountDownLatch(1);
        runtime.go(() -> {
            thrown.countDown();
            throw new IllegalStateException("a bug in service code running as a goroutine");
        });
        assertThat(thrown.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(100);
        assertThat(runtime.run(() -> 42)).isEqualTo(42);
        assertThat(runtime.isShutdown()).isFalse();
        client.get().uri("/api/v1/jobs").exchange().expectStatus().isOk();
    }
}
