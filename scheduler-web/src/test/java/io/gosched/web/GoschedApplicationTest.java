package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.web.deploy.Dashboard;
import io.gosched.web.telemetry.TelemetrySnapshot;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.test.StepVerifier;

/** The whole service on a random port: metrics, the SSE stream, the live page. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class GoschedApplicationTest {

    @Autowired
    WebTestClient client;

    @Autowired
    GoRuntime runtime;

    @Test
    void afterAJobPrometheusCarriesEveryMetricTheDashboardNames() {
        MeterTraffic.runJobAndChannelOps(client, "app-test");
        String text = MeterTraffic.scrape(client);

        List<String> missing = Dashboard.load().metricNames().stream()
                .filter(name -> !Pattern.compile("(?m)^" + name + "[{ ]").matcher(text).find())
                // the cluster row's meters exist only in cluster mode (ClusterDashboardTest proves them)
                .filter(name -> !Dashboard.isClusterOnly(name))
                // the HTTP-target calls' meters exist once a target is allowed and called (PrometheusDashboardTest does)
                .filter(name -> !Dashboard.needsHttpTargets(name))
                .toList();
        assertThat(missing).as("dashboard metrics absent from /actuator/prometheus").isEmpty();
        assertThat(text).contains("gosched_sched_goroutines_created_goroutines_total");
        assertThat(text).containsPattern("(?m)^gosched_sched_latencies_seconds_count\\{application=\"gosched\"} [1-9]");
    }

    /**
     * Requests are observed as requests, not filter by filter: Spring Security's per-phase
     * observations were a fifth of a request's CPU (see ApiSecurityAutoConfiguration).
     */
    @Test
    void requestsAreTimedButNotEachSecurityFilter() {
        MeterTraffic.runJobAndChannelOps(client, "app-test-observations");
        String text = MeterTraffic.scrape(client);
        assertThat(text).containsPattern("(?m)^http_server_requests_seconds_count\\{.*uri=\"/api/v1/jobs\".*} [1-9]");
        assertThat(text).doesNotContainPattern("(?m)^spring_security_");
    }

    @Test
    void aSkewedWorkloadShowsUpAsSteals() throws Exception {
        assumeTrue(runtime.gomaxprocs() > 1, "stealing needs two Ps; GOMAXPROCS is " + runtime.gomaxprocs());
        double before = counter(MeterTraffic.scrape(client), "gosched_steals_total");
        // One goroutine spawns them all: they queue on its P (runnext, then its ring), so the other
        // Ps can only get work by stealing it. Fewer than the ring holds (256), or the overflow
        // would hand half of them to the global queue, where the other Ps find them without a
        // steal; each long enough (about a millisecond) that the idle P's M is awake well before
        // the spawner's P could run them all.
        CountDownLatch done = new CountDownLatch(200);
        runtime.go(() -> {
            for (int i = 0; i < 200; i++) {
                Go.go(() -> {
                    long x = 0;
                    for (int k = 0; k < 2_000_000; k++) {
                        x += k * 31L;
                    }
                    if (x == 42) {
                        throw new AssertionError("unreachable; keeps the loop alive");
                    }
                    done.countDown();
                });
            }
        });
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
        String text = MeterTraffic.scrape(client);
        assertThat(counter(text, "gosched_steals_total")).isGreaterThan(before);
        assertThat(counter(text, "gosched_stolen_goroutines_total")).isGreaterThan(0);
    }

    private static double counter(String text, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "(?:\\{[^}]*})? (\\S+)$").matcher(text);
        assertThat(m.find()).as("%s in the scrape", name).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void streamSendsSnapshotsWithOneProcEntryPerP() {
        var body = client.get().uri("/api/v1/telemetry/stream?intervalMs=100").accept(MediaType.TEXT_EVENT_STREAM)
                .exchange().expectStatus().isOk()
                .returnResult(new ParameterizedTypeReference<ServerSentEvent<TelemetrySnapshot>>() {})
                .getResponseBody();
        StepVerifier.create(body.filter(e -> e.data() != null).take(3))
                .expectNextMatches(e -> e.data().procs().size() == runtime.gomaxprocs() && "snapshot".equals(e.event()))
                .expectNextCount(2)
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void badIntervalsAreProblemDetailsNamingTheParameter() {
        for (String bad : List.of("99", "10001", "-5")) {
            client.get().uri("/api/v1/telemetry/stream?intervalMs={v}", bad).accept(MediaType.TEXT_EVENT_STREAM)
                    .exchange()
                    .expectStatus().isEqualTo(422)
                    .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.parameter").isEqualTo("intervalMs")
                    .jsonPath("$.min").isEqualTo(100)
                    .jsonPath("$.max").isEqualTo(10000)
                    .jsonPath("$.errors[0].pointer").isEqualTo("/intervalMs")
                    .jsonPath("$.detail").value(d -> assertThat((String) d).contains("100", "10000", bad));
        }
        client.get().uri("/api/v1/telemetry/stream?intervalMs=abc").accept(MediaType.TEXT_EVENT_STREAM)
                .exchange()
                .expectStatus().isBadRequest()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:malformed-request")
                .jsonPath("$.parameter").isEqualTo("intervalMs")
                .jsonPath("$.detail").value(d -> assertThat((String) d).contains("intervalMs", "integer", "abc"));
    }

    @Test
    void livePageIsServedAtTheRootWithItsAssets() {
        client.get().uri("/").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML)
                .expectBody(String.class).value(html -> assertThat(html)
                        .contains("id=\"lanes\"", "id=\"job-form\"", "app.js", "app.css",
                                "id=\"trace-link\" class=\"button\" href=\"/api/v1/trace?seconds=5\"")
                        .doesNotContain("http://", "https://"));
        client.get().uri("/app.js").exchange().expectStatus().isOk()
                .expectBody(String.class).value(js -> assertThat(js).contains("/api/v1/telemetry/stream")
                        .doesNotContain("http://", "https://"));
        client.get().uri("/app.css").exchange().expectStatus().isOk();
    }

    @Test
    void readinessAndPrometheusEndpointsAreExposed() {
        client.get().uri("/actuator/health/readiness").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.status").isEqualTo("UP");
        client.get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
    }
}
