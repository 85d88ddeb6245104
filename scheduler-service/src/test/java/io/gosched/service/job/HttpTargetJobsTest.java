package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.http.HttpCaller;
import io.gosched.service.http.HttpJobProperties;
import io.gosched.service.http.TargetServer;
import io.gosched.service.job.spi.JobState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * HTTP-target jobs through the job service, against a real server on loopback: a job's result is
 * the target's answer, its attempts carry the same Idempotency-Key, and the retry policy follows
 * the answer (5xx again, 4xx not, 429 no earlier than Retry-After).
 */
class HttpTargetJobsTest extends JobServiceFixture {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private TargetServer target;
    private HttpCaller caller;

    @BeforeEach
    void start() throws Exception {
        target = new TargetServer();
        caller = embeddedWithHttpTargets(HttpJobProperties.allowing(target.url("/hooks/")), io.gosched.service.handler.JobHandlers.NONE);
    }

    @AfterEach
    void closeTarget() {
        caller.close();
        target.close();
    }

    private String submit(String body) {
        return jobs.submit(JSON.readTree(body), null).job().id();
    }

    private JobView await(String id, JobState state) {
        return JobAwait.state(jobs, id, state, Duration.ofSeconds(20));
    }

    @Test
    void aSucceededJobsResultIsTheTargetsAnswer() {
        target.on("/hooks/ok", (x, body) -> TargetServer.answer(x, 200, "application/json", "{\"got\":" + body + "}"));
        String id = submit("{\"http\": {\"url\": \"" + target.url("/hooks/ok") + "\", \"body\": {\"n\": 3}}}");
        JobView v = await(id, JobState.SUCCEEDED);
        JsonNode result = JSON.valueToTree(v).get("result");
        assertThat(result.get("status").asInt()).isEqualTo(200);
        assertThat(result.get("body").get("got").get("n").asInt()).isEqualTo(3);
        assertThat(result.has("lastReceived")).isFalse();
        TargetServer.Seen seen = target.seen.peek();
        assertThat(seen.header("Idempotency-Key")).isEqualTo(id);
        assertThat(seen.header("Gosched-Attempt")).isEqualTo("1");
    }

    @Test
    void serverErrorsAreRetriedWithTheSameIdempotencyKeyUntilTheTargetSucceeds() {
        AtomicInteger calls = new AtomicInteger();
        target.on("/hooks/flaky", (x, body) -> TargetServer.answer(x, calls.incrementAndGet() < 3 ? 502 : 200, null, ""));
        String id = submit("{\"http\": {\"url\": \"" + target.url("/hooks/flaky") + "\"}, \"retry\": {\"maxAttempts\": 3, \"backoffMs\": 10}}");
        JobView v = await(id, JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(3);
        assertThat(target.seen).extracting(s -> s.header("Idempotency-Key")).containsOnly(id);
        assertThat(target.seen).extracting(s -> s.header("Gosched-Attempt")).containsExactly("1", "2", "3");
        assertThat(v.attempts()).filteredOn(a -> a.outcome().equals("failed")).hasSize(2)
                .extracting(a -> a.error().detail()).allMatch(d -> d.contains("answered 502"));
    }

    @Test
    void aClientErrorFailsTheJobWithoutARetry() {
        target.on("/hooks/gone", (x, body) -> TargetServer.answer(x, 410, null, ""));
        String id = submit("{\"http\": {\"url\": \"" + target.url("/hooks/gone") + "\"}, \"retry\": {\"maxAttempts\": 5, \"backoffMs\": 10}}");
        JobView v = await(id, JobState.FAILED);
        assertThat(v.attempt()).isEqualTo(1);
        assertThat(v.error().pointer()).isEqualTo("/http");
        assertThat(v.error().detail()).contains("answered 410");
        assertThat(target.count("/hooks/gone")).isEqualTo(1);
    }

    @Test
    void tooManyRequestsIsRetriedNoEarlierThanRetryAfter() {
        AtomicInteger calls = new AtomicInteger();
        target.on("/hooks/busy", (x, body) -> {
            if (calls.incrementAndGet() == 1) {
                x.getResponseHeaders().set("Retry-After", "2");
                TargetServer.answer(x, 429, null, "");
            } else {
                TargetServer.answer(x, 200, null, "");
            }
        });
        String id = submit("{\"http\": {\"url\": \"" + target.url("/hooks/busy") + "\"}, \"retry\": {\"maxAttempts\": 2, \"backoffMs\": 0}}");
        await(id, JobState.SUCCEEDED);
        List<Long> at = target.seen.stream().map(TargetServer.Seen::atNanos).sorted().toList();
        assertThat(at).hasSize(2);
        // Retry-After is in whole seconds: the second call comes no earlier than 2 s less the clock's rounding
        assertThat(at.get(1) - at.get(0)).isGreaterThan(Duration.ofMillis(1_900).toNanos());
    }

    @Test
    void aCallLongerThanTheJobsTimeoutTimesTheJobOutAndDeleteCancelsOneInFlight() {
        target.on("/hooks/slow", (x, body) -> {
            Thread.sleep(20_000);
            TargetServer.answer(x, 200, null, "");
        });
        String timedOut = submit("{\"http\": {\"url\": \"" + target.url("/hooks/slow") + "\"}, \"timeoutMs\": 300}");
        await(timedOut, JobState.TIMED_OUT);
        String cancelled = submit("{\"http\": {\"url\": \"" + target.url("/hooks/slow") + "\"}}");
        JobAwait.state(jobs, cancelled, JobState.RUNNING, Duration.ofSeconds(10));
        jobs.cancel(cancelled);
        await(cancelled, JobState.CANCELLED);
    }

    @Test
    void aTargetOutsideTheAllowedPrefixesIsRefusedAtSubmission() {
        assertThatThrownBy(() -> submit("{\"http\": {\"url\": \"" + target.url("/admin") + "\"}}"))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.violations()).singleElement()
                        .satisfies(v -> {
                            assertThat(v.pointer()).isEqualTo("/http/url");
                            assertThat(v.detail()).contains("gosched.jobs.http.allowed-targets");
                        }));
        assertThatThrownBy(() -> submit("{\"http\": {\"url\": \"" + target.url("/hooks/a") + "\"}, \"template\": \"pingpong\"}"))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("exactly one of");
        assertThat(target.seen).isEmpty();
    }
}
