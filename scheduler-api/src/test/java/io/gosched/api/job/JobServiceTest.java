package io.gosched.api.job;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.gosched.api.ApiMetrics;
import io.gosched.api.ApiProperties;
import io.gosched.api.budget.HeldValue;
import io.gosched.api.budget.ServiceBudget;
import io.gosched.api.channel.ChannelService;
import io.gosched.api.error.ApiProblem;
import io.gosched.api.testapp.TestProperties;
import io.gosched.api.workload.WorkloadParser;
import io.gosched.api.workload.WorkloadTemplates;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Received;
import io.gosched.runtime.SchedulerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The job service without HTTP: admission, priority order, retention, metrics, shutdown. */
class JobServiceTest {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ServiceBudget budget;
    ChannelService channels;
    JobService jobs;

    void service(Map<String, String> props) {
        Map<String, String> all = new HashMap<>(props);
        ApiProperties p = TestProperties.api(all);
        ApiMetrics metrics = new ApiMetrics(registry);
        budget = ServiceBudget.of(p, metrics);
        channels = new ChannelService(p, metrics, budget);
        jobs = new JobService(runtime, channels, p, metrics, new WorkloadParser(p.limits()), new WorkloadTemplates(), Clock.systemUTC(),
                budget);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (jobs != null) {
            jobs.cancelAll(Duration.ofSeconds(5));
        }
        runtime.shutdown(Duration.ofSeconds(5));
    }

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    JobView await(String id, JobState state) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        JobView v;
        do {
            v = jobs.get(id);
            if (v.state() == state) {
                return v;
            }
            Thread.onSpinWait();
        } while (System.nanoTime() < end);
        throw new AssertionError("never reached " + state + ": " + v);
    }

    @Test
    void admissionAnswers429WhenTheQueueIsFullAndRecovers() {
        service(Map.of("gosched.api.admission.max-running-jobs", "1", "gosched.api.admission.max-queued-jobs", "5",
                "gosched.api.admission.retry-after", "2s"));
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'sleep','ms':60000}]}}"), null).job().id();
        await(blocker, JobState.RUNNING);
        List<String> queued = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            queued.add(jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null).job().id());
        }
        assertThat(jobs.waitingJobs()).isEqualTo(5);
        for (int i = 0; i < 20; i++) { // a flood: every one refused, none stored
            assertThatThrownBy(() -> jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null))
                    .isInstanceOfSatisfying(ApiProblem.class, p -> {
                        assertThat(p.getStatusCode().value()).isEqualTo(429);
                        assertThat(p.getHeaders().getFirst("Retry-After")).isEqualTo("2");
                    });
        }
        assertThat(jobs.size()).isEqualTo(6);
        jobs.cancel(blocker);
        queued.forEach(id -> await(id, JobState.SUCCEEDED));
        assertThat(jobs.waitingJobs()).isZero();
        String after = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null).job().id();
        await(after, JobState.SUCCEEDED);
    }

    @Test
    void higherPriorityRunsFirstAndFifoWithinALevel() {
        service(Map.of("gosched.api.admission.max-running-jobs", "1"));
        channels.create("gate", 0);
        channels.create("order", 100);
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'gate'}]}}"), null).job().id();
        await(blocker, JobState.RUNNING);
        int[] priorities = {1, 5, 9, 5, 1, 9, 0, 5};
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < priorities.length; i++) {
            ids.add(jobs.submit(json("{'priority':" + priorities[i] + ",'workload':{'steps':[{'op':'send','channel':'order','value':" + i
                    + "}]}}"), null).job().id());
        }
        channels.lookup("gate").sendAsync(JSON.getNodeFactory().numberNode(0));
        ids.forEach(id -> await(id, JobState.SUCCEEDED));
        List<Integer> order = new ArrayList<>();
        Received<Object> r;
        while ((r = channels.lookup("order").tryRecv()) != null && r.ok()) {
            order.add(HeldValue.take(r.value()).asInt());
        }
        // priority 9: jobs 2, 5; priority 5: 1, 3, 7; priority 1: 0, 4; priority 0: 6
        assertThat(order).containsExactly(2, 5, 1, 3, 7, 0, 4, 6);
        assertThat(channels.get("order").share().used()).as("every value taken gave its bytes back").isZero();
    }

    @Test
    void retentionKeepsTheStoreBoundedUnderEndlessSubmissions() {
        service(Map.of("gosched.api.retention.max-finished-jobs", "200", "gosched.api.admission.max-running-jobs", "32",
                "gosched.api.admission.max-queued-jobs", "500"));
        int total = 100_000 * STRESS;
        int bound = 200 + 32 + 500;
        int maxSeen = 0;
        JsonNode body = json("{'workload':{'steps':[{'op':'yield'}]}}");
        for (int i = 0; i < total; ) {
            try {
                jobs.submit(body, i % 10 == 0 ? "k" + i : null);
                i++;
            } catch (ApiProblem overloaded) {
                assertThat(overloaded.getStatusCode().value()).isEqualTo(429);
                Thread.onSpinWait();
            }
            if ((i & 255) == 0) {
                maxSeen = Math.max(maxSeen, jobs.size());
            }
        }
        assertThat(maxSeen).as("jobs held while submitting").isLessThanOrEqualTo(bound);
        // runningJobs() (the live gauge) drops before a job's final state is visible, and the job is
        // retired (and the oldest one evicted) just after: wait for that last retirement too. A
        // store that stays above the bound still fails below, after the deadline.
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while ((jobs.runningJobs() > 0 || jobs.waitingJobs() > 0 || jobs.size() > 200) && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertThat(jobs.size()).as("finished jobs kept").isLessThanOrEqualTo(200);
        assertThat(jobs.idempotencyKeys()).as("keys die with their jobs").isLessThanOrEqualTo(200);
        assertThat(registry.get("gosched.jobs.submitted").counter().count()).isEqualTo(total);
        assertThat(registry.get("gosched.jobs.finished").tag("state", "succeeded").counter().count()).isEqualTo(total);
    }

    @Test
    void finishedJobsExpireByAge() throws InterruptedException {
        service(Map.of("gosched.api.retention.max-age", "50ms"));
        String id = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), "age-key").job().id();
        await(id, JobState.SUCCEEDED);
        Thread.sleep(100);
        assertThat(jobs.list(null, 0, 10).total()).isZero();
        assertThatThrownBy(() -> jobs.get(id)).isInstanceOfSatisfying(ApiProblem.class,
                p -> assertThat(p.getStatusCode().value()).isEqualTo(404));
        assertThat(jobs.idempotencyKeys()).isZero();
    }

    @Test
    void metersFollowJobs() {
        service(Map.of());
        String ok = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null).job().id();
        String bad = jobs.submit(json("{'workload':{'channels':[{'name':'c'}],'steps':[{'op':'close','channel':'c'},"
                + "{'op':'close','channel':'c'}]}}"), null).job().id();
        await(ok, JobState.SUCCEEDED);
        JobView failed = await(bad, JobState.FAILED);
        assertThat(failed.error().pointer()).isEqualTo("/workload/steps/1");
        assertThat(registry.get("gosched.jobs.finished").tag("state", "failed").counter().count()).isEqualTo(1);
        assertThat(registry.get("gosched.jobs.duration").tag("state", "succeeded").timer().count()).isEqualTo(1);
        assertThat(registry.get("gosched.jobs.live").gauge().value()).isZero();
        assertThat(registry.get("gosched.jobs.queued").gauge().value()).isZero();
        channels.create("m", 1);
        assertThat(registry.get("gosched.channels").gauge().value()).isEqualTo(1);
    }

    @Test
    void shuttingDownRefusesNewWorkWith503AndCancelsRunningJobs() throws InterruptedException {
        service(Map.of());
        String running = jobs.submit(json("{'workload':{'steps':[{'op':'spawn','count':10,'steps':[{'op':'sleep','ms':60000}]}]}}"), null)
                .job().id();
        await(running, JobState.RUNNING);
        reactor.test.StepVerifier.create(jobs.events(running))
                .expectNextMatches(e -> e.data().state() == JobState.RUNNING)
                .then(jobs::beginShutdown)
                .expectComplete() // open SSE streams must not hold graceful shutdown
                .verify(Duration.ofSeconds(5));
        assertThat(jobs.cancelAll(Duration.ofSeconds(5))).isTrue();
        assertThat(jobs.get(running).state()).isEqualTo(JobState.CANCELLED);
        assertThatThrownBy(() -> jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null))
                .isInstanceOfSatisfying(ApiProblem.class, p -> assertThat(p.getStatusCode().value()).isEqualTo(503));
    }
}
