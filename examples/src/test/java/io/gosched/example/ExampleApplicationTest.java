package io.gosched.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The example as its README runs it: the app on a random port, a real local HTTP server as the quote
 * service, jobs submitted over HTTP and their results read back.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class ExampleApplicationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    static final AtomicInteger calls = new AtomicInteger();
    static final List<String> keys = new CopyOnWriteArrayList<>();
    static final HttpServer quotes = start();

    private static HttpServer start() {
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            s.createContext("/quotes/", exchange -> {
                keys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
                String symbol = exchange.getRequestURI().getPath().substring("/quotes/".length());
                // FLAKY answers 503 on its first call: the job's retry policy tries again.
                boolean fail = symbol.equals("FLAKY") && calls.getAndIncrement() == 0;
                byte[] body = (fail ? "busy" : "{\"symbol\":\"" + symbol + "\",\"price\":42.5}").getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(fail ? 503 : 200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            s.start();
            return s;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void quoteService(DynamicPropertyRegistry r) {
        r.add("example.quotes.url", () -> "http://127.0.0.1:" + quotes.getAddress().getPort() + "/quotes/");
    }

    @AfterAll
    static void stop() {
        quotes.stop(0);
    }

    @Autowired
    WebTestClient http;

    private JsonNode finished(String body) {
        String id = JSON.readTree(http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isAccepted().expectBody().returnResult().getResponseBody()).get("id").asString();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode j = JSON.readTree(http.get().uri("/api/v1/jobs/" + id).exchange().expectBody().returnResult().getResponseBody());
            String state = j.get("state").asString();
            if (!state.equals("queued") && !state.equals("running")) {
                return j;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("job " + id + " did not end within 30 s");
    }

    @Test
    void primes() {
        JsonNode j = finished("{\"handler\": \"primes\", \"args\": {\"below\": 100}}");
        assertThat(j.get("state").asString()).as(j.toString()).isEqualTo("succeeded");
        assertThat(j.get("result").get("count").asInt()).isEqualTo(25);
        assertThat(j.get("result").get("largest").asInt()).isEqualTo(97);
    }

    @Test
    void aQuoteFromTheServiceWithARetryOnItsFirst503() {
        JsonNode j = finished("{\"handler\": \"quote\", \"args\": {\"symbol\": \"FLAKY\"}, \"retry\": {\"maxAttempts\": 2, \"backoffMs\": 10}}");
        assertThat(j.get("state").asString()).as(j.toString()).isEqualTo("succeeded");
        assertThat(j.get("result").get("status").asInt()).isEqualTo(200);
        assertThat(j.get("result").get("body").asString()).contains("42.5");
        assertThat(j.get("result").get("attempt").asInt()).isEqualTo(2);
        assertThat(keys).containsExactly(j.get("id").asString(), j.get("id").asString());
    }

    @Test
    void aBadArgumentIsRefusedNamingTheField() {
        http.post().uri("/api/v1/jobs").contentType(MediaType.APPLICATION_JSON).bodyValue("{\"handler\": \"primes\", \"args\": {\"below\": 1}}")
                .exchange().expectStatus().isEqualTo(422).expectBody().jsonPath("$.errors[0].pointer").isEqualTo("/args/below");
    }
}
