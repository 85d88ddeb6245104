package io.gosched.service.job;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.job.memory.InMemoryJobStore;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;

import io.gosched.service.job.JobSpecParser;

import io.gosched.service.job.JobSpec;

import io.gosched.service.job.JobMemory;

import io.gosched.service.error.InvalidRequestException;

import io.gosched.service.error.NotFoundException;

import io.gosched.service.error.RefusedException;

import io.gosched.service.error.ShuttingDownException;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.JsonSize;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.testing.ManualClock;
import io.gosched.service.testing.TestProperties;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.gosched.runtime.Received;
import io.gosched.testing.Await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The job service without HTTP: admission, priority order, retention, metrics, shutdown. */
class JobServiceTest extends JobServiceFixture {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** The service's clock: record times and ages move only when a test moves it. */
    ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    ServiceBudget budget;
    ChannelService channels;
    /** The service's in-memory store, for its Idempotency-Keys. */
    InMemoryJobStore store;

    void service(Map<String, String> props) {
        Map<String, String> all = new HashMap<>(props);
        ServiceProperties p = TestProperties.service(all);
        ServiceMetrics metrics = new ServiceMetrics(registry);
        budget = ServiceBudget.of(p, metrics);
        channels = TestChannels.soleNode(p, metrics, budget);
        EmbeddedJobs embedded = EmbeddedJobs.start(runtime, channels, p, metrics, clock, budget);
        jobs = embedded.jobs();
        store = embedded.store();
    }

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    JobView await(String id, JobState state) {
        return JobAwait.state(jobs, id, state, Duration.ofSeconds(20));
    }

    /** Runs assertion until it passes, for at most 10 s; then its last failure is the test's (as the cause). */
    static void eventually(Runnable assertion) {
        Await.untilPasses("the assertion", Duration.ofSeconds(10), assertion);
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
                    .isInstanceOfSatisfying(RefusedException.class, p -> {
                        assertThat(p.reason()).isEqualTo(RefusedException.Reason.OVERLOADED);
                        assertThat(p.retryAfter()).isEqualTo(Duration.ofSeconds(2));
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
        channels.registry().create("gate", 0);
        channels.registry().create("order", 100);
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'gate'}]}}"), null).job().id();
        await(blocker, JobState.RUNNING);
        int[] priorities = {1, 5, 9, 5, 1, 9, 0, 5};
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < priorities.length; i++) {
            ids.add(jobs.submit(json("{'priority':" + priorities[i] + ",'workload':{'steps':[{'op':'send','channel':'order','value':" + i
                    + "}]}}"), null).job().id());
        }
        channels.registry().lookup("gate").sendAsync(JSON.getNodeFactory().numberNode(0));
        ids.forEach(id -> await(id, JobState.SUCCEEDED));
        List<Integer> order = new ArrayList<>();
        Received<Object> r;
        while ((r = channels.registry().lookup("order").tryRecv()) != null && r.ok()) {
            order.add(HeldValue.take(r.value()).asInt());
        }
        // priority 9: jobs 2, 5; priority 5: 1, 3, 7; priority 1: 0, 4; priority 0: 6
        assertThat(order).containsExactly(2, 5, 1, 3, 7, 0, 4, 6);
        assertThat(channels.registry().get("order").share().used()).as("every value taken gave its bytes back").isZero();
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
            } catch (RefusedException overloaded) {
                assertThat(overloaded.reason()).isEqualTo(RefusedException.Reason.OVERLOADED);
                Thread.yield(); // a client retrying at once: let the running job get on
            }
            if ((i & 255) == 0) {
                maxSeen = Math.max(maxSeen, jobs.size());
            }
        }
        assertThat(maxSeen).as("jobs held while submitting").isLessThanOrEqualTo(bound);
        // runningJobs() (the live gauge) drops before a job's final state is visible, and the job is
        // retired (and the oldest one evicted) just after: wait for that last retirement too. A
        // store that stays above the bound still fails below, after the deadline.
        Await.holdsWithin(Duration.ofSeconds(30),
                () -> jobs.runningJobs() == 0 && jobs.waitingJobs() == 0 && jobs.size() <= 200);
        assertThat(jobs.size()).as("finished jobs kept").isLessThanOrEqualTo(200);
        assertThat(store.keyCount()).as("keys die with their jobs").isLessThanOrEqualTo(200);
        // Every job's charge moved with it: nothing is left queued or running, and what the
        // finished ones hold is what 200 of them hold.
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isZero();
        assertThat(budget.memory().held(Retained.RUNNING_JOBS)).isZero();
        long one = JobMemory.requestBytes(new JobSpecParserFixture().parse(body)) + textBytes(body);
        assertThat(budget.memory().held(Retained.FINISHED_JOBS)).isEqualTo(jobs.size() * one);
        assertThat(registry.get("gosched.jobs.submitted").counter().count()).isEqualTo(total);
        assertThat(registry.get("gosched.jobs.finished").tag("state", "succeeded").counter().count()).isEqualTo(total);
    }

    @Test
    void finishedJobsExpireByAge() {
        service(Map.of("gosched.api.retention.max-age", "1h"));
        String id = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), "age-key").job().id();
        await(id, JobState.SUCCEEDED);
        clock.advance(Duration.ofMinutes(60));
        assertThat(jobs.get(id).state()).as("exactly max-age old: kept").isEqualTo(JobState.SUCCEEDED);
        assertThat(store.keyCount()).isEqualTo(1);
        clock.advance(Duration.ofMillis(1));
        assertThat(jobs.list((JobState) null, 0, 10).total()).isZero();
        assertThatThrownBy(() -> jobs.get(id)).isInstanceOf(NotFoundException.class);
        assertThat(store.keyCount()).isZero();
    }

    @Test
    void aJobsTimesAndDurationAreTheServiceClocks() {
        service(Map.of());
        Instant t0 = clock.instant();
        String quick = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null).job().id();
        JobView q = await(quick, JobState.SUCCEEDED);
        assertThat(List.of(q.submittedAt(), q.queuedAt(), q.startedAt(), q.finishedAt())).containsOnly(t0);
        assertThat(q.durationMs()).isZero();

        String slow = jobs.submit(json("{'workload':{'steps':[{'op':'sleep','ms':60000}]}}"), null).job().id();
        await(slow, JobState.RUNNING);
        Instant t1 = clock.advance(Duration.ofSeconds(5));
        assertThat(jobs.get(slow).durationMs()).as("running: so far").isEqualTo(5_000);
        clock.advance(Duration.ofMillis(250));
        jobs.cancel(slow);
        JobView s = await(slow, JobState.CANCELLED);
        assertThat(s.startedAt()).isEqualTo(t0);
        assertThat(s.finishedAt()).isEqualTo(t1.plusMillis(250));
        assertThat(s.durationMs()).isEqualTo(5_250);
    }

    @Test
    void aFailedAttemptIsRetriedOnlyOnceItsBackoffHasPassedOnTheServiceClock() {
        service(Map.of());
        String id = jobs.submit(json("""
                {'workload':{'channels':[{'name':'c','capacity':1}],
                  'steps':[{'op':'close','channel':'c'},{'op':'send','channel':'c','value':1}]},
                 'retry':{'maxAttempts':2,'backoffMs':600000,'multiplier':1}}"""), null).job().id();
        eventually(() -> {
            JobView v = jobs.get(id);
            assertThat(v.state()).as("attempt 1 failed and waits out its backoff").isEqualTo(JobState.QUEUED);
            assertThat(v.attempt()).isEqualTo(1);
            assertThat(v.attempts()).singleElement().satisfies(a -> assertThat(a.error()).isNotNull());
        });
        clock.advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(Await.holdsWithin(Duration.ofSeconds(1), () -> jobs.get(id).state() != JobState.QUEUED))
                .as("a millisecond of a 10-minute backoff left: not run").isFalse();
        clock.advance(Duration.ofMillis(1));
        JobView failed = await(id, JobState.FAILED);
        assertThat(failed.attempt()).as("the retry ran, and was the last").isEqualTo(2);
    }

    @Test
    void aRetriedJobShowsEachAttemptAndNothingOfAPastOneAsCurrent() {
        service(Map.of());
        String id = jobs.submit(json("""
                {'workload':{'channels':[{'name':'c','capacity':1}],
                  'steps':[{'op':'close','channel':'c'},{'op':'send','channel':'c','value':1}]},
                 'retry':{'maxAttempts':2,'backoffMs':600000,'multiplier':1}}"""), null).job().id();
        Instant firstEnd = clock.instant();
        eventually(() -> {
            JobView v = jobs.get(id);
            assertThat(v.state()).as("attempt 1 failed; the job waits out its backoff").isEqualTo(JobState.QUEUED);
            assertThat(v.attempt()).isEqualTo(1);
            assertThat(v.maxAttempts()).isEqualTo(2);
            assertThat(v.startedAt()).as("no attempt is running: no start").isNull();
            assertThat(v.durationMs()).isNull();
            assertThat(v.error()).as("the failure is attempt 1's, not the job's now").isNull();
            assertThat(v.attempts()).singleElement().satisfies(a -> {
                assertThat(a.number()).isEqualTo(1);
                assertThat(a.outcome()).isEqualTo("failed");
                assertThat(a.startedAt()).isEqualTo(firstEnd);
                assertThat(a.finishedAt()).isEqualTo(firstEnd);
                assertThat(a.durationMs()).isZero();
                assertThat(a.error().pointer()).isEqualTo("/workload/steps/1");
            });
        });
        Instant retryAt = clock.advance(Duration.ofMinutes(10));
        JobView failed = await(id, JobState.FAILED);
        assertThat(failed.attempt()).isEqualTo(2);
        assertThat(failed.maxAttempts()).isEqualTo(2);
        assertThat(failed.error().pointer()).as("the last attempt's failure is the job's").isEqualTo("/workload/steps/1");
        assertThat(failed.attempts()).extracting(JobView.AttemptView::number).containsExactly(1, 2);
        assertThat(failed.attempts().get(1).startedAt()).isEqualTo(retryAt);

        jobs.retry(id); // a manual retry: a fresh budget of two attempts; attempt 3 fails and waits out its backoff
        eventually(() -> {
            JobView v = jobs.get(id);
            assertThat(v.state()).isEqualTo(JobState.QUEUED);
            assertThat(v.attempts()).hasSize(3);
        });
        JobView again = jobs.get(id);
        assertThat(again.attempt()).isLessThanOrEqualTo(again.maxAttempts());
        assertThat(again.maxAttempts()).as("two more from the manual retry on").isEqualTo(4);
        assertThat(again.startedAt()).isNull();
        assertThat(again.error()).isNull();
        assertThat(again.attempts()).extracting(JobView.AttemptView::outcome).containsExactly("failed", "failed", "failed");
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
        // The engine counts a finish right after its compare-and-set made the state visible (the
        // CAS is the commit; counting before it would count a write that may lose): wait for it.
        eventually(() -> {
            assertThat(registry.find("gosched.jobs.finished").tag("state", "failed").counter())
                    .as("failed counter").isNotNull().extracting(c -> c.count()).isEqualTo(1.0);
            assertThat(registry.find("gosched.jobs.duration").tag("state", "succeeded").timer())
                    .as("succeeded timer").isNotNull().extracting(t -> t.count()).isEqualTo(1L);
            assertThat(registry.get("gosched.jobs.live").gauge().value()).isZero();
            assertThat(registry.get("gosched.jobs.queued").gauge().value()).isZero();
        });
        channels.registry().create("m", 1);
        assertThat(registry.get("gosched.channels").gauge().value()).isEqualTo(1);
    }

    @Test
    void shuttingDownRefusesNewWorkWith503AndCancelsRunningJobs() throws InterruptedException {
        service(Map.of());
        String running = jobs.submit(json("{'workload':{'steps':[{'op':'spawn','count':10,'steps':[{'op':'sleep','ms':60000}]}]}}"), null)
                .job().id();
        await(running, JobState.RUNNING);
        reactor.test.StepVerifier.create(jobs.events(running))
                .expectNextMatches(e -> e.job().state() == JobState.RUNNING)
                .then(jobs::beginShutdown)
                .expectComplete() // open SSE streams must not hold graceful shutdown
                .verify(Duration.ofSeconds(5));
        assertThat(jobs.cancelAll(Duration.ofSeconds(5))).isTrue();
        assertThat(jobs.get(running).state()).isEqualTo(JobState.CANCELLED);
        assertThatThrownBy(() -> jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null))
                .isInstanceOf(ShuttingDownException.class);
    }

    /** What the in-memory store's JSON text of {@code body} occupies: a byte array of its UTF-8 (compact) form. */
    static long textBytes(JsonNode body) {
        int header = JsonSize.layout().header();
        long bytes = header + 4 + body.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        return (bytes + 7) & ~7L;
    }

    @Test
    void aWaitingJobIsChargedItsParsedRequestAndItsJsonTextHoweverDeepTheQueue() {
        // The engine keeps every waiting job's parsed request (no second parse at its claim) and the
        // store its JSON text: the charge holds both, for the last of a deep queue as for the first.
        service(Map.of("gosched.api.admission.max-queued-jobs", "6000"));
        String later = clock.instant().plusSeconds(600).toString();
        JsonNode small = json("{'notBefore':'" + later + "','workload':{'steps':[{'op':'yield'}]}}");
        JsonNode big = json("{'notBefore':'" + later + "','workload':{'channels':[{'name':'own','capacity':1}],"
                + "'steps':[{'op':'send','channel':'own','value':'" + "v".repeat(2_000) + "'}]}}");
        long smallCharge = JobMemory.requestBytes(new JobSpecParserFixture().parse(small)) + textBytes(small);
        long bigCharge = JobMemory.requestBytes(new JobSpecParserFixture().parse(big)) + textBytes(big);
        assertThat(textBytes(big)).as("the text of a 2,000-character value").isGreaterThan(2_000);
        for (int i = 0; i < 5_000; i++) {
            jobs.submit(small, null);
        }
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isEqualTo(5_000 * smallCharge);
        String id = jobs.submit(big, null).job().id();
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isEqualTo(5_000 * smallCharge + bigCharge);
        jobs.cancel(id);
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isEqualTo(5_000 * smallCharge);
        assertThat(budget.memory().held(Retained.FINISHED_JOBS)).as("a cancelled job keeps its request and text").isEqualTo(bigCharge);
    }

    /** Parses a body the way the service does, for its byte estimate. */
    static final class JobSpecParserFixture {
        JobSpec parse(JsonNode body) {
            ServiceProperties p = TestProperties.service(Map.of());
            return new JobSpecParser(new WorkloadParser(p.limits()), new WorkloadTemplates(), io.gosched.service.http.HttpJobs.off(), io.gosched.service.handler.JobHandlers.NONE).parse(body, Instant.parse("2026-01-01T00:00:00Z"));
        }
    }

    static final String KB50 = "k".repeat(50_000);

    /** A budget of 4 MiB: jobs of one or two hundred KB fill it quickly. */
    static Map<String, String> smallBudget(String... more) {
        Map<String, String> m = new HashMap<>(Map.of("gosched.api.limits.max-retained-bytes", Integer.toString(4 << 20)));
        for (int i = 0; i < more.length; i += 2) {
            m.put(more[i], more[i + 1]);
        }
        return m;
    }

    @Test
    void aJobLargerThanItsShareIs422AndABudgetFullOfJobsRefusesWith429() {
        service(smallBudget());
        assertThatThrownBy(() -> jobs.submit(json("{'workload':{'steps':[{'op':'spawn','count':1000,'steps':[{'op':'sleep','ms':1}]}]}}"), null))
                .isInstanceOfSatisfying(InvalidRequestException.class, p -> {
                    assertThat(p.getMessage()).contains("/workload", "1001 goroutines", "gosched.api.limits.max-job-bytes",
                            Integer.toString((4 << 20) / 4));
                });
        String delayed = "{'notBefore':'" + clock.instant().plusSeconds(600) + "','workload':{'channels':[{'name':'own','capacity':1}],"
                + "'steps':[{'op':'send','channel':'own','value':'" + KB50 + "'}]}}";
        List<String> accepted = new ArrayList<>();
        RefusedException refused = null;
        for (int i = 0; i < 200 && refused == null; i++) {
            try {
                accepted.add(jobs.submit(json(delayed), "key-" + i).job().id());
            } catch (RefusedException p) {
                refused = p;
            }
        }
        assertThat(refused).as("the budget refused a job").isNotNull();
        assertThat(refused.reason()).isEqualTo(RefusedException.Reason.MEMORY_BUDGET);
        assertThat(refused.members()).containsEntry("budget", "gosched.api.limits.max-retained-bytes")
                .containsEntry("kind", "queued_jobs");
        // each holds its 50 KB twice: in the parsed request the engine keeps and in the JSON text the store keeps
        assertThat(accepted.size()).as("about 4 MiB of 50 KB requests, each charged twice").isBetween(30, 43);
        assertThat(jobs.size()).as("a refused job is not stored").isEqualTo(accepted.size());
        assertThat(budget.memory().held(Retained.QUEUED_JOBS) + budget.memory().held(Retained.IDEMPOTENCY_KEYS))
                .isEqualTo(budget.memory().used());
        accepted.forEach(jobs::cancel);
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isZero();
        assertThat(budget.memory().held(Retained.FINISHED_JOBS)).as("cancelled jobs are finished ones").isPositive();
        // A new job now fits: the budget evicts the oldest finished jobs for it.
        String fresh = jobs.submit(json(delayed), null).job().id();
        assertThat(jobs.get(fresh).state()).isEqualTo(JobState.QUEUED);
        assertThatThrownBy(() -> jobs.get(accepted.getFirst())).as("the oldest finished job made room")
                .isInstanceOf(NotFoundException.class);
        assertThat(jobs.get(accepted.getLast()).state()).as("the newest is kept").isEqualTo(JobState.CANCELLED);
        assertThat(registry.get("gosched.jobs.evicted").tag("reason", "pressure").counter().count()).isPositive();
        assertThat(registry.get("gosched.api.budget.refusals").tag("budget", "max-retained-bytes").counter().count()).isEqualTo(1);
        assertThat(registry.get("gosched.api.budget.refusals").tag("budget", "max-job-bytes").counter().count()).isEqualTo(1);
    }

    @Test
    void channelValuesEvictFinishedJobsOldestFirstBeforeTheyAreRefused() {
        service(smallBudget("gosched.api.limits.max-channel-bytes", Integer.toString(4 << 20)));
        List<String> done = new ArrayList<>();
        for (int i = 0; i < 40; i++) { // 40 finished jobs of 50 KB: half the budget
            String id = jobs.submit(json("{'workload':{'channels':[{'name':'own','capacity':1}],"
                    + "'steps':[{'op':'send','channel':'own','value':'" + KB50 + "'}]}}"), null).job().id();
            await(id, JobState.SUCCEEDED);
            done.add(id);
        }
        channels.registry().create("fill", 1000);
        int sent = 0;
        while (true) {
            try {
                channels.send("fill", JSON.getNodeFactory().stringNode(KB50), Duration.ofSeconds(1)).block();
                sent++;
            } catch (RefusedException refused) {
                assertThat(refused.reason()).isEqualTo(RefusedException.Reason.MEMORY_BUDGET);
                break;
            }
        }
        assertThat(sent).as("values took the finished jobs' room").isGreaterThan(70);
        assertThat(registry.get("gosched.jobs.evicted").tag("reason", "pressure").counter().count()).isEqualTo(40);
        assertThat(jobs.size()).isZero();
        assertThat(budget.memory().held(Retained.FINISHED_JOBS)).isZero();
        for (int i = 0; i < sent; i++) {
            assertThat(channels.recv("fill", Duration.ZERO).block().value().asString()).isEqualTo(KB50);
        }
        assertThat(channels.registry().get("fill").share().used()).isZero();
    }

    @Test
    void theHeadOfTheQueueWaitsForBudgetRoomAndStartsWhenValuesLeave() throws InterruptedException {
        service(smallBudget("gosched.api.limits.max-channel-bytes", Integer.toString(4 << 20),
                "gosched.api.limits.max-job-bytes", Integer.toString(4 << 20)));
        channels.registry().create("gate", 0);
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'gate'}]}}"), null).job().id();
        await(blocker, JobState.RUNNING); // with a job running, the head waits rather than start past the budget
        channels.registry().create("hold", 1000);
        int sent = 0;
        while (budget.memory().used() < (3 << 20)) { // leave less than a megabyte
            channels.send("hold", JSON.getNodeFactory().stringNode(KB50), Duration.ofSeconds(1)).block();
            sent++;
        }
        // 300 goroutines need 1.2 MB of stacks: accepted (its request fits), but it cannot start yet.
        String id = jobs.submit(json("{'workload':{'steps':[{'op':'spawn','count':299,'steps':[{'op':'yield'}]},{'op':'wait'}]}}"), null)
                .job().id();
        Thread.sleep(300);
        assertThat(jobs.get(id).state()).as("waiting for its goroutine stacks' room").isEqualTo(JobState.QUEUED);
        for (int i = 0; i < sent; i++) {
            channels.recv("hold", Duration.ZERO).block();
        }
        await(id, JobState.SUCCEEDED);
        channels.send("gate", JSON.getNodeFactory().numberNode(1), Duration.ofSeconds(5)).block();
        await(blocker, JobState.SUCCEEDED);
        assertThat(budget.memory().held(Retained.RUNNING_JOBS)).isZero();
    }

    @Test
    void aBudgetFullOfWaitingRequestsStillRunsThemAll() {
        service(smallBudget("gosched.api.limits.max-job-bytes", Integer.toString(4 << 20)));
        String soon = "{'notBefore':'" + clock.instant().plusMillis(1500) + "','workload':{'channels':[{'name':'own','capacity':1}],"
                + "'steps':[{'op':'spawn','count':20,'steps':[{'op':'yield'}]},{'op':'send','channel':'own','value':'" + KB50 + "'}]}}";
        List<String> ids = new ArrayList<>();
        while (true) {
            try {
                ids.add(jobs.submit(json(soon), null).job().id());
            } catch (RefusedException full) {
                break;
            }
        }
        assertThat(budget.memory().max() - budget.memory().used()).as("no room for a run's stacks")
                .isLessThan(JobMemory.RUN_BYTES + 21 * JobMemory.GOROUTINE_BYTES);
        clock.advance(Duration.ofMillis(1500));
        // Each starts (alone, when nothing runs and there is no room) and succeeds; the finished
        // ones are then evicted under pressure by the next ones' runs, so count them by the meter.
        Await.holdsWithin(Duration.ofSeconds(60), () -> jobs.waitingJobs() == 0 && jobs.runningJobs() == 0);
        assertThat(registry.get("gosched.jobs.finished").tag("state", "succeeded").counter().count()).isEqualTo(ids.size());
        assertThat(budget.memory().held(Retained.RUNNING_JOBS)).isZero();
        assertThat(budget.memory().held(Retained.QUEUED_JOBS)).isZero();
    }

    @Test
    void aJobsSendOnAFullChannelShareWaitsForRoomAndLosesNothing() {
        service(Map.of("gosched.api.limits.max-channel-bytes", "65536"));
        channels.registry().create("narrow", 1000);
        String one = "v".repeat(1000);
        String id = jobs.submit(json("{'workload':{'steps':[{'op':'send','channel':'narrow','value':'" + one + "','times':200}]}}"), null)
                .job().id();
        Await.holdsWithin(Duration.ofSeconds(10), () -> channels.registry().view(channels.registry().get("narrow")).len() >= 55);
        JobView v = jobs.get(id);
        assertThat(v.state()).as("blocked on the share, not failed").isEqualTo(JobState.RUNNING);
        int len = channels.registry().view(channels.registry().get("narrow")).len();
        assertThat(len).as("64 KiB of 1 KB values").isBetween(55, 64);
        assertThat(channels.registry().get("narrow").share().used()).isLessThanOrEqualTo(65536);
        for (int i = 0; i < 200; i++) {
            assertThat(channels.recv("narrow", Duration.ofSeconds(5)).block().value().asString()).isEqualTo(one);
        }
        await(id, JobState.SUCCEEDED);
        assertThat(channels.registry().get("narrow").share().used()).isZero();
        // A job cancelled while it waits for room gives back what it charged.
        String stuck = jobs.submit(json("{'workload':{'steps':[{'op':'send','channel':'narrow','value':'" + one + "','times':200}]}}"), null)
                .job().id();
        Await.until("55 values buffered on narrow", () -> channels.registry().view(channels.registry().get("narrow")).len() >= 55);
        jobs.cancel(stuck);
        await(stuck, JobState.CANCELLED);
        long buffered = channels.registry().view(channels.registry().get("narrow")).len();
        assertThat(channels.registry().get("narrow").share().used()).as("only what is buffered").isEqualTo(buffered * (JsonSize.of(
                JSON.getNodeFactory().stringNode(one)) + HeldValue.SIZE));
        // And one cancelled while its charged value waits for a slot (the channel is full, its share is not).
        channels.registry().create("tight", 5);
        String full = jobs.submit(json("{'workload':{'steps':[{'op':'send','channel':'tight','value':'" + one + "','times':10}]}}"), null)
                .job().id();
        Await.until("a sender waiting on tight", () -> channels.registry().view(channels.registry().get("tight")).waitingSenders() >= 1);
        jobs.cancel(full);
        await(full, JobState.CANCELLED);
        assertThat(channels.registry().get("tight").share().used()).as("the withdrawn send gave its bytes back")
                .isEqualTo(5 * (JsonSize.of(JSON.getNodeFactory().stringNode(one)) + HeldValue.SIZE));
        channels.registry().delete("narrow");
        channels.registry().delete("tight");
        assertThat(budget.memory().held(Retained.CHANNELS)).as("DELETE returns the buffered values and the slots").isZero();
    }
}
