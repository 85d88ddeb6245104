package io.gosched.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.context.CancelContext;
import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.time.Time;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * HTTP-target calls against a real server on loopback: what a target receives, how each kind of
 * answer ends the attempt, the limits per target, and that waiting calls hold no thread.
 */
class HttpCallerTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    private TargetServer server;
    private HttpCaller caller;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @BeforeEach
    void start() throws Exception {
        server = new TargetServer();
    }

    @AfterEach
    void stop() {
        if (caller != null) {
            caller.close();
        }
        server.close();
        rt.shutdown(Duration.ofSeconds(5));
    }

    private HttpCaller caller(HttpJobProperties p) {
        caller = new HttpCaller(p, new HttpTargets(p), meters);
        return caller;
    }

    private HttpCaller caller() {
        return caller(HttpJobProperties.allowing(server.url("/")));
    }

    private static HttpCall call(String method, String url, JsonNode body, long timeoutMs) {
        return new HttpCall(method, URI.create(url), Map.of("X-Trace", "t-1"), body, timeoutMs);
    }

    private HttpOutcome run(HttpCall c) throws Exception {
        return rt.run(() -> caller.call(c, "job-42", 3, Context.background(), 1 << 20));
    }

    @Test
    void aJsonAnswerIsTheResultAndTheTargetGetsTheJobsIdAndAttempt() throws Exception {
        server.on("/hook", (x, body) -> TargetServer.answer(x, 201, "application/json; charset=utf-8", "{\"echo\":" + body + "}"));
        caller();
        HttpOutcome out = run(call("POST", server.url("/hook"), JSON.readTree("{\"n\":7}"), 5_000));

        assertThat(out).isInstanceOf(HttpOutcome.Succeeded.class);
        JsonNode result = ((HttpOutcome.Succeeded) out).result();
        assertThat(result.get("status").asInt()).isEqualTo(201);
        assertThat(result.get("body").get("echo").get("n").asInt()).isEqualTo(7);
        assertThat(result.get("headers").get("content-type").asString()).startsWith("application/json");
        TargetServer.Seen seen = server.seen.peek();
        assertThat(seen.method()).isEqualTo("POST");
        assertThat(seen.header("Idempotency-Key")).isEqualTo("job-42");
        assertThat(seen.header("Gosched-Attempt")).isEqualTo("3");
        assertThat(seen.header("X-Trace")).isEqualTo("t-1");
        assertThat(seen.header("Content-Type")).isEqualTo("application/json");
        assertThat(meters.get("gosched.http.target.requests").tag("outcome", "2xx").counter().count()).isEqualTo(1.0);
    }

    @Test
    void aTextAnswerIsKeptAsTextAndAStringBodyIsSentAsText() throws Exception {
        server.on("/text", (x, body) -> TargetServer.answer(x, 200, "text/plain", "got " + body));
        caller();
        HttpOutcome out = run(call("PUT", server.url("/text"), JSON.getNodeFactory().stringNode("hello"), 5_000));

        JsonNode result = ((HttpOutcome.Succeeded) out).result();
        assertThat(result.get("body").asString()).isEqualTo("got hello");
        assertThat(server.seen.peek().header("Content-Type")).startsWith("text/plain");
    }

    @Test
    void serverErrorsAndTimeoutsAndRefusedConnectionsAreRetryableOtherClientErrorsAreNot() throws Exception {
        server.on("/500", (x, b) -> TargetServer.answer(x, 500, "text/plain", "boom"));
        server.on("/404", (x, b) -> TargetServer.answer(x, 404, null, ""));
        server.on("/slow", (x, b) -> {
            Thread.sleep(3_000);
            TargetServer.answer(x, 200, null, "");
        });
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        HttpJobProperties p = HttpJobProperties.allowing(server.url("/"), "http://127.0.0.1:" + closedPort + "/");
        caller(p);

        HttpOutcome.Failed e500 = (HttpOutcome.Failed) run(call("POST", server.url("/500"), null, 5_000));
        assertThat(e500.retryable()).isTrue();
        assertThat(e500.status()).isEqualTo(500);
        assertThat(e500.error()).contains("answered 500");
        assertThat(e500.result().get("body").asString()).isEqualTo("boom");

        HttpOutcome.Failed e404 = (HttpOutcome.Failed) run(call("GET", server.url("/404"), null, 5_000));
        assertThat(e404.retryable()).isFalse();
        assertThat(e404.status()).isEqualTo(404);

        HttpOutcome.Failed slow = (HttpOutcome.Failed) run(call("GET", server.url("/slow"), null, 200));
        assertThat(slow.retryable()).isTrue();
        assertThat(slow.error()).contains("timed out after 200 ms");

        HttpOutcome.Failed refused = (HttpOutcome.Failed) run(call("GET", "http://127.0.0.1:" + closedPort + "/x", null, 5_000));
        assertThat(refused.retryable()).isTrue();
        assertThat(refused.error()).startsWith("could not connect to");
    }

    @Test
    void retryAfterOnTooManyRequestsAndUnavailableSaysFromWhen() throws Exception {
        server.on("/429", (x, b) -> {
            x.getResponseHeaders().set("Retry-After", "120");
            TargetServer.answer(x, 429, null, "");
        });
        server.on("/503", (x, b) -> {
            x.getResponseHeaders().set("Retry-After", "Wed, 21 Oct 2037 07:28:00 GMT");
            TargetServer.answer(x, 503, null, "");
        });
        caller();
        Instant before = Instant.now();
        HttpOutcome.Failed e429 = (HttpOutcome.Failed) run(call("POST", server.url("/429"), null, 5_000));
        assertThat(e429.retryable()).isTrue();
        assertThat(e429.notBefore()).isAfterOrEqualTo(before.plusSeconds(119)).isBefore(Instant.now().plusSeconds(121));
        HttpOutcome.Failed e503 = (HttpOutcome.Failed) run(call("POST", server.url("/503"), null, 5_000));
        assertThat(e503.retryable()).isTrue();
        assertThat(e503.notBefore()).isEqualTo(Instant.parse("2037-10-21T07:28:00Z"));
    }

    @Test
    void aBodyLargerThanTheBoundFailsTheAttemptForGoodWhetherAnnouncedOrStreamed() throws Exception {
        String big = "x".repeat(10_000);
        server.on("/announced", (x, b) -> TargetServer.answer(x, 200, "text/plain", big));
        server.on("/chunked", (x, b) -> {
            x.sendResponseHeaders(200, 0); // chunked: the size is not known up front
            try (var out = x.getResponseBody()) {
                for (int i = 0; i < 10; i++) {
                    out.write(big.substring(0, 1000).getBytes());
                    out.flush();
                }
            }
        });
        caller(HttpJobProperties.allowing(server.url("/")).withMaxResponseBytes(4096));
        for (String path : List.of("/announced", "/chunked")) {
            HttpOutcome.Failed f = (HttpOutcome.Failed) run(call("GET", server.url(path), null, 5_000));
            assertThat(f.retryable()).as(path).isFalse();
            assertThat(f.error()).as(path).contains("larger than 4096 bytes");
        }
    }

    @Test
    void redirectsAreFollowedWithinTheAllowedTargetsAndNeverOutOfThem() throws Exception {
        try (TargetServer outside = new TargetServer()) {
            outside.on("/", (x, b) -> TargetServer.answer(x, 200, null, "outside"));
            server.on("/in/moved", (x, b) -> {
                x.getResponseHeaders().set("Location", "/in/here");
                TargetServer.answer(x, 303, null, "");
            });
            server.on("/in/here", (x, b) -> TargetServer.answer(x, 200, "application/json", "{\"at\":\"here\"}"));
            server.on("/in/away", (x, b) -> {
                x.getResponseHeaders().set("Location", outside.url("/steal"));
                TargetServer.answer(x, 307, null, "");
            });
            caller(HttpJobProperties.allowing(server.url("/in/")));

            HttpOutcome ok = run(call("POST", server.url("/in/moved"), JSON.readTree("{}"), 5_000));
            assertThat(((HttpOutcome.Succeeded) ok).result().get("body").get("at").asString()).isEqualTo("here");
            assertThat(server.seen).filteredOn(s -> s.path().equals("/in/here")).singleElement()
                    .satisfies(s -> assertThat(s.method()).isEqualTo("GET")); // 303: see other, as GET

            HttpOutcome.Failed away = (HttpOutcome.Failed) run(call("POST", server.url("/in/away"), JSON.readTree("{}"), 5_000));
            assertThat(away.retryable()).isFalse();
            assertThat(away.error()).contains("not followed").contains(HttpTargets.ALLOWED_TARGETS);
            assertThat(outside.seen).isEmpty();
        }
    }

    @Test
    void aCancelledContextEndsAWaitingCallAtOnce() throws Exception {
        server.on("/hang", (x, b) -> {
            Thread.sleep(30_000);
            TargetServer.answer(x, 200, null, "");
        });
        caller();
        HttpOutcome out = rt.run(() -> {
            CancelContext ctx = Context.withCancel(Context.background());
            Time.afterFunc(Duration.ofMillis(100), ctx::cancel);
            return caller.call(call("GET", server.url("/hang"), null, 60_000), "job-1", 1, ctx, 1 << 20);
        });
        assertThat(out).isInstanceOf(HttpOutcome.Cancelled.class);
    }

    @Test
    void aTargetsConcurrencyLimitHoldsAndIsReached() throws Exception {
        server.on("/limited", (x, b) -> {
            Thread.sleep(50);
            TargetServer.answer(x, 200, null, "");
        });
        HttpJobProperties p = HttpJobProperties.allowing(server.url("/"))
                .withTargets(List.of(new HttpJobProperties.Target(server.url("/limited"), 3, 0)));
        caller(p);
        int calls = 24;
        int ok = rt.run(() -> {
            Chan<HttpOutcome> outs = Chan.make(calls);
            for (int i = 0; i < calls; i++) {
                Go.go(() -> outs.send(caller.call(call("GET", server.url("/limited"), null, 10_000), "j", 1, Context.background(), 1024)));
            }
            int n = 0;
            for (int i = 0; i < calls; i++) {
                n += outs.recv() instanceof HttpOutcome.Succeeded ? 1 : 0;
            }
            return n;
        });
        assertThat(ok).isEqualTo(calls);
        assertThat(server.maxInFlight.get()).isEqualTo(3);
    }

    @Test
    void aTargetsRateLimitSpacesTheStarts() throws Exception {
        server.on("/paced", (x, b) -> TargetServer.answer(x, 200, null, ""));
        server.on("/warm", (x, b) -> {
            Thread.sleep(100); // held, so that the calls open a connection each
            TargetServer.answer(x, 200, null, "");
        });
        HttpJobProperties p = HttpJobProperties.allowing(server.url("/"))
                .withTargets(List.of(new HttpJobProperties.Target(server.url("/paced"), 0, 20)));
        caller(p);
        int calls = 11;
        // Connections opened first (kept alive in the client's pool): a cold connection's set-up
        // would delay the first arrivals and bunch them up, which is not what is measured here.
        for (String path : List.of("/warm", "/paced")) {
            rt.run(() -> {
                Chan<HttpOutcome> outs = Chan.make(calls);
                for (int i = 0; i < calls; i++) {
                    Go.go(() -> outs.send(caller.call(call("GET", server.url(path), null, 10_000), "j", 1, Context.background(), 1024)));
                }
                for (int i = 0; i < calls; i++) {
                    assertThat(outs.recv()).isInstanceOf(HttpOutcome.Succeeded.class);
                }
                return null;
            });
        }
        List<Long> at = new ArrayList<>(server.seen.stream().filter(s -> s.path().equals("/paced")).map(TargetServer.Seen::atNanos)
                .sorted().toList());
        // 20 per second: ten gaps of 50 ms between eleven starts. A lower bound the limiter
        // guarantees (arrivals may bunch by a few ms of network jitter, hence the margin).
        assertThat(at.getLast() - at.getFirst()).isGreaterThan(Duration.ofMillis(450).toNanos());
    }

    /**
     * The point of running calls as goroutines: a call waiting for its answer is parked, so many
     * slow calls in flight hold a few platform threads. The server holds every call until all of
     * them are in flight; the JVM's thread count is read then (virtual threads, the test
     * server's, are not in it).
     */
    @Test
    void manySlowCallsInFlightHoldAFewPlatformThreads() throws Exception {
        int calls = 2_000;
        CountDownLatch release = new CountDownLatch(1);
        server.on("/slow", (x, b) -> {
            release.await(60, TimeUnit.SECONDS);
            TargetServer.answer(x, 200, null, "");
        });
        caller();
        int before = ManagementFactory.getThreadMXBean().getThreadCount();
        AtomicInteger during = new AtomicInteger();
        int ok = rt.run(() -> {
            Chan<HttpOutcome> outs = Chan.make(calls);
            for (int i = 0; i < calls; i++) {
                Go.go(() -> outs.send(caller.call(call("GET", server.url("/slow"), null, 120_000), "j", 1, Context.background(), 1024)));
            }
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (server.inFlight.get() < calls && System.nanoTime() - end < 0) {
                Time.sleep(Duration.ofMillis(20));
            }
            during.set(ManagementFactory.getThreadMXBean().getThreadCount());
            release.countDown();
            int n = 0;
            for (int i = 0; i < calls; i++) {
                n += outs.recv() instanceof HttpOutcome.Succeeded ? 1 : 0;
            }
            return n;
        });
        assertThat(ok).isEqualTo(calls);
        assertThat(server.maxInFlight.get()).as("calls in flight at once").isEqualTo(calls);
        assertThat(during.get() - before).as("platform threads added while %d calls waited", calls).isLessThan(32);
    }
}
