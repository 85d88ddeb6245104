package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.gosched.service.ServiceProperties;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.Violation;
import io.gosched.service.handler.JobHandlers;
import io.gosched.service.http.HttpJobs;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.testing.OneHandler;
import io.gosched.service.testing.TestProperties;
import io.gosched.service.workload.Task;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Which handler jobs a node accepts: embedded, only its own handlers' (an unknown one is a 422
 * naming it); in a cluster also another node's, unread, recorded under the handler's kind, and
 * never parsed here to run.
 */
class HandlerJobSpecsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    /** One handler, "h", whose args need a non-negative integer n. */
    private static final JobHandlers H = new OneHandler("h",
            (args, pointer, in) -> OneHandler.nonNegative(args, "n", pointer, in) == null ? null : call -> new Task.Outcome.Done(null));

    private static JobSpecs specs(JobHandlers handlers) {
        ServiceProperties p = TestProperties.service(Map.of());
        return new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates(), HttpJobs.off(), handlers);
    }

    private static JsonNode body(String json) {
        return JSON.readTree(json);
    }

    private static List<String> pointers(Runnable parse) {
        try {
            parse.run();
        } catch (InvalidRequestException e) {
            return e.violations().stream().map(Violation::pointer).toList();
        }
        throw new AssertionError("accepted");
    }

    @Test
    void embeddedAnUnknownHandlerIsRefusedAndAKnownOneValidatesItsArgs() {
        JobSpecs none = specs(JobHandlers.NONE);
        assertThatThrownBy(() -> none.parse(body("{\"handler\": \"h\", \"args\": {\"n\": 1}}"), NOW))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("unknown handler 'h'");
        JobSpecs own = specs(H);
        assertThat(own.parse(body("{\"handler\": \"h\", \"args\": {\"n\": 1}}"), NOW).kind()).isEqualTo("handler:h");
        assertThat(pointers(() -> own.parse(body("{\"handler\": \"h\", \"args\": {\"n\": -1}}"), NOW))).containsExactly("/args/n");
        assertThatThrownBy(() -> own.parse(body("{\"handler\": \"resize-image\"}"), NOW)).isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void inAClusterAnotherNodesHandlerIsAcceptedUnreadButNeverParsedToRunHere() {
        JobSpecs s = specs(H);
        s.shared();
        JobSpec other = s.parse(body("{\"handler\": \"resize-image\", \"args\": {\"width\": \"anything\"}, \"retry\": {\"maxAttempts\": 3}}"), NOW);
        assertThat(other.kind()).isEqualTo("handler:resize-image");
        assertThat(other.retry().maxAttempts()).as("the rest of the body is read as ever").isEqualTo(3);
        JobRecord.Spec stored = new JobRecord.Spec(body("{\"handler\": \"resize-image\"}"), null, null, 5, 1, 1000, 1, NOW, null, null,
                null, null, null, null, "handler:resize-image");
        assertThat(s.runsHere(stored)).isFalse();
        assertThat(s.parse(stored).kind()).isEqualTo("handler:resize-image");
        assertThatThrownBy(() -> s.parseToRun(stored)).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("unknown handler 'resize-image'");
        // its own handler still validates at submission
        assertThat(pointers(() -> s.parse(body("{\"handler\": \"h\", \"args\": {\"n\": -1}}"), NOW))).containsExactly("/args/n");
        assertThat(pointers(() -> s.parse(body("{\"handler\": \" \"}"), NOW))).containsExactly("/handler");
        assertThat(s.runsHere(new JobRecord.Spec(body("{\"handler\": \"h\", \"args\": {\"n\": 1}}"), null, null, 5, 1, 1000, 1, NOW, null,
                null, null, null, null, null, "handler:h"))).isTrue();
    }

    @Test
    void aJobPassedOnKeepsItsAttemptsAndPlaceAndARunningOneCountsItsLostAttempt() {
        JobRecord.Status q = JobRecord.Status.queued(NOW);
        JobRecord.Status passed = q.passedOn(NOW.plusSeconds(5));
        assertThat(passed.state()).isEqualTo(JobState.QUEUED);
        assertThat(passed.ticket()).isEqualTo(q.ticket() + 1);
        assertThat(passed.attempt()).isZero();
        assertThat(passed.queuedAt()).as("its place in line").isEqualTo(NOW);
        assertThat(passed.attempts()).isEmpty();

        JobRecord.Status running = q.claimed("dead-node", NOW);
        JobRecord.Status back = running.passedOn(NOW.plusSeconds(5));
        assertThat(back.state()).isEqualTo(JobState.QUEUED);
        assertThat(back.ticket()).isEqualTo(running.ticket() + 1);
        assertThat(back.attempts()).singleElement().satisfies(a -> assertThat(a.outcome()).isEqualTo(JobRecord.Attempt.LOST));

        JobRecord.Status done = running.finished(JobState.SUCCEEDED, NOW, JobRecord.Counters.ZERO, null, null);
        assertThatThrownBy(() -> done.passedOn(NOW)).isInstanceOf(IllegalStateException.class);
    }
}
