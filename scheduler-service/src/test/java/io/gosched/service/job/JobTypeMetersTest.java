package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.handler.JobHandlers;
import io.gosched.service.http.HttpCaller;
import io.gosched.service.http.HttpJobProperties;
import io.gosched.service.http.TargetServer;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.testing.OneHandler;
import io.gosched.service.workload.Task;
import io.gosched.testing.Await;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The by-type job meters through the job service, read from a real registry: jobs of every type
 * (a DSL workload, a template, an HTTP target on a real loopback server, an application handler)
 * are counted under their own {@code type} as they are submitted, retried by their policy and
 * finished, each attempt that ran is timed under its type, and the HTTP target's calls are
 * counted by the allowed prefix they matched and their status class.
 */
class JobTypeMetersTest extends JobServiceFixture {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private TargetServer target;
    private HttpCaller caller;
    private String prefix;
    private String refusedPrefix;

    /** A real handler set: "double" answers {@code {"n": 2 * args.n}}. */
    private static final JobHandlers HANDLERS = new OneHandler("double", (args, pointer, in) -> {
        int n = args == null ? 0 : args.path("n").asInt();
        return call -> new Task.Outcome.Done(JSON.createObjectNode().put("n", 2 * n));
    });

    @BeforeEach
    void start() throws Exception {
        target = new TargetServer();
        prefix = target.url("/hooks/");
        refusedPrefix = "http://127.0.0.1:" + closedPort() + "/";
        caller = embeddedWithHttpTargets(HttpJobProperties.allowing(prefix, refusedPrefix), HANDLERS);
    }

    @AfterEach
    void closeTarget() {
        caller.close();
        target.close();
    }

    private String submit(String body) {
        return jobs.submit(JSON.readTree(body.replace('\'', '"')), null).job().id();
    }

    private void await(String id, JobState state) {
        JobAwait.state(jobs, id, state, Duration.ofSeconds(30));
    }

    private double count(String name, String type, String... tags) {
        Counter c = meters.find(name).tag("type", type).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    private long attempts(String type) {
        Timer t = meters.find("gosched.jobs.by.type.attempt.duration").tag("type", type).timer();
        return t == null ? 0 : t.count();
    }

    @Test
    void everyJobIsCountedUnderItsTypeAtSubmissionRetryAndFinish() {
        AtomicInteger flaky = new AtomicInteger();
        target.on("/hooks/flaky", (x, body) -> TargetServer.answer(x, flaky.incrementAndGet() < 2 ? 502 : 200, null, ""));
        target.on("/hooks/gone", (x, body) -> TargetServer.answer(x, 410, null, ""));

        String dslOk = submit("{'workload':{'steps':[{'op':'yield'}]}}");
        String dslOk2 = submit("{'workload':{'steps':[{'op':'compute','us':100}]}}");
        // closing a closed channel fails the step: attempt 1 fails, is retried, attempt 2 fails for good
        String dslBad = submit("{'workload':{'channels':[{'name':'c'}],'steps':[{'op':'close','channel':'c'},"
                + "{'op':'close','channel':'c'}]},'retry':{'maxAttempts':2,'backoffMs':10}}");
        String dslSlow = submit("{'workload':{'steps':[{'op':'sleep','ms':60000}]},'timeoutMs':200}");
        String template = submit("{'template':'ping-pong'}");
        String httpFlaky = submit("{'http':{'url':'" + target.url("/hooks/flaky") + "'},'retry':{'maxAttempts':3,'backoffMs':10}}");
        String httpGone = submit("{'http':{'url':'" + target.url("/hooks/gone") + "'},'retry':{'maxAttempts':3,'backoffMs':10}}");
        String handler = submit("{'handler':'double','args':{'n':21}}");

        await(dslOk, JobState.SUCCEEDED);
        await(dslOk2, JobState.SUCCEEDED);
        await(dslBad, JobState.FAILED);
        await(dslSlow, JobState.TIMED_OUT);
        await(template, JobState.SUCCEEDED);
        await(httpFlaky, JobState.SUCCEEDED);
        await(httpGone, JobState.FAILED);
        await(handler, JobState.SUCCEEDED);

        // A finish is counted right after its compare-and-set made the state visible: wait for the last ones.
        Await.untilPasses("the by-type meters counted every finish", Duration.ofSeconds(30), () -> {
            assertThat(count("gosched.jobs.by.type.finished", "dsl", "state", "succeeded")).isEqualTo(2.0);
            assertThat(count("gosched.jobs.by.type.finished", "dsl", "state", "failed")).isEqualTo(1.0);
            assertThat(count("gosched.jobs.by.type.finished", "dsl", "state", "timed_out")).isEqualTo(1.0);
            assertThat(count("gosched.jobs.by.type.finished", "template:ping-pong", "state", "succeeded")).isEqualTo(1.0);
            assertThat(count("gosched.jobs.by.type.finished", "http", "state", "succeeded")).isEqualTo(1.0);
            assertThat(count("gosched.jobs.by.type.finished", "http", "state", "failed")).isEqualTo(1.0);
            assertThat(count("gosched.jobs.by.type.finished", "handler:double", "state", "succeeded")).isEqualTo(1.0);
        });
        assertThat(count("gosched.jobs.by.type.submitted", "dsl")).isEqualTo(4.0);
        assertThat(count("gosched.jobs.by.type.submitted", "template:ping-pong")).isEqualTo(1.0);
        assertThat(count("gosched.jobs.by.type.submitted", "http")).isEqualTo(2.0);
        assertThat(count("gosched.jobs.by.type.submitted", "handler:double")).isEqualTo(1.0);
        assertThat(count("gosched.jobs.by.type.retried", "dsl")).as("the failing workload's one retry").isEqualTo(1.0);
        assertThat(count("gosched.jobs.by.type.retried", "http")).as("the 502's retry; a 410 is not retried").isEqualTo(1.0);
        assertThat(count("gosched.jobs.by.type.retried", "template:ping-pong")).isZero();
        assertThat(count("gosched.jobs.by.type.retried", "handler:double")).isZero();
        // every attempt that ran is timed: dsl 1 + 1 + 2 + 1, http 2 + 1
        assertThat(attempts("dsl")).isEqualTo(5);
        assertThat(attempts("template:ping-pong")).isEqualTo(1);
        assertThat(attempts("http")).isEqualTo(3);
        assertThat(attempts("handler:double")).isEqualTo(1);
        assertThat(meters.find("gosched.jobs.by.type.attempt.duration").tag("type", "dsl").timer().max(java.util.concurrent.TimeUnit.MILLISECONDS))
                .as("the timed-out attempt ran its 200 ms").isGreaterThanOrEqualTo(150.0);
        // the old, untyped meters go on as before
        assertThat(meters.get("gosched.jobs.submitted").counter().count()).isEqualTo(8.0);
        assertThat(meters.get("gosched.jobs.finished").tag("state", "succeeded").counter().count()).isEqualTo(5.0);

        Set<String> types = new TreeSet<>();
        for (Meter m : meters.getMeters()) {
            if (m.getId().getName().startsWith("gosched.jobs.by.type.")) {
                types.add(m.getId().getTag("type"));
            }
        }
        assertThat(types).as("one series per type seen, nothing else").containsExactly("dsl", "handler:double", "http", "template:ping-pong");

        // the calls, by the allowed prefix they matched (never the URL) and status class
        assertThat(meters.find("gosched.http.target.requests").tags("target", prefix, "outcome", "5xx").counter().count()).isEqualTo(1.0);
        assertThat(meters.find("gosched.http.target.requests").tags("target", prefix, "outcome", "2xx").counter().count()).isEqualTo(1.0);
        assertThat(meters.find("gosched.http.target.requests").tags("target", prefix, "outcome", "4xx").counter().count()).isEqualTo(1.0);
        assertThat(meters.find("gosched.http.target.requests").counters()).extracting(c -> c.getId().getTag("target"))
                .as("the target is the prefix matched, never the URL").containsOnly(prefix);
        Timer latency = meters.get("gosched.http.target.duration").tag("target", prefix).timer();
        assertThat(latency.count()).isEqualTo(3);
    }

    @Test
    void aCallThatGetsNoAnswerIsCountedByWhyUnderItsOwnPrefix() {
        String id = submit("{'http':{'url':'" + refusedPrefix + "x'}}");
        await(id, JobState.FAILED);
        assertThat(meters.find("gosched.http.target.requests").tags("target", refusedPrefix, "outcome", "connect_error").counter())
                .as("a refused connect").isNotNull().extracting(Counter::count).isEqualTo(1.0);
        assertThat(meters.find("gosched.http.target.requests").tag("target", prefix).counter()).as("no call to the other prefix").isNull();
        assertThat(count("gosched.jobs.by.type.finished", "http", "state", "failed")).isEqualTo(1.0);
    }

    /** A loopback port nobody listens on (bound, then closed): a connect to it is refused. */
    private static int closedPort() throws java.io.IOException {
        try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
