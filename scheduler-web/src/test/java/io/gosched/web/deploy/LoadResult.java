package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/** What every run of the containerized load test (deploy/loadtest/wrk-ramp.sh) must show in its result file. */
final class LoadResult {

    private LoadResult() {}

    /**
     * Requests were answered, in a ramp and a steady phase at the saturation point, every response a
     * 202 or a 429 (no 5xx, no 4xx of a malformed load), every 429 with Retry-After, no socket errors.
     */
    static void assertRanClean(JsonNode result, String output) {
        String context = "load result " + result + "\nload test output:\n" + output;
        JsonNode totals = result.path("totals");
        assertThat(totals.path("requests").asLong()).as("requests answered; %s", context).isPositive();
        assertThat(totals.path("status_5xx").asLong()).as("5xx responses; %s", context).isZero();
        assertThat(totals.path("retry_after_missing").asLong()).as("429s without Retry-After; %s", context).isZero();
        assertThat(totals.path("socket_errors").asLong()).as("socket errors (connect, read, write, timeout); %s", context).isZero();

        List<String> kinds = new ArrayList<>();
        long requests = 0;
        for (JsonNode phase : result.path("phases")) {
            kinds.add(phase.path("phase").asString());
            requests += phase.path("requests").asLong();
            long counted = 0;
            for (var status : phase.path("statuses").properties()) {
                assertThat(status.getKey()).as("a response status of phase %s; %s", phase, context).isIn("202", "429");
                counted += status.getValue().asLong();
            }
            assertThat(counted).as("every response of phase %s counted by status", phase).isEqualTo(phase.path("requests").asLong());
        }
        assertThat(kinds).as("the phases").contains("ramp").last().isEqualTo("steady");
        assertThat(requests).as("the totals add the phases up").isEqualTo(totals.path("requests").asLong());

        JsonNode steady = result.path("steady");
        assertThat(steady.path("requests").asLong()).as("steady phase requests; %s", context).isPositive();
        assertThat(steady.path("rps").asDouble()).isPositive();
        assertThat(steady.path("p50_ms").asDouble()).isPositive().isLessThanOrEqualTo(steady.path("p99_ms").asDouble());
        assertThat(steady.path("connections").asInt()).as("the steady phase holds the saturation point")
                .isEqualTo(result.path("saturation").path("connections").asInt());
    }
}
