package io.gosched.service.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.Violation;
import io.gosched.service.job.memory.InMemoryJobQueue;
import io.gosched.service.job.memory.InMemoryJobStore;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.testing.TestChannels;
import io.gosched.service.testing.TestProperties;
import io.gosched.service.workload.WorkloadParser;
import io.gosched.service.workload.WorkloadTemplates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Jobs that wait for other jobs ({@code after}, state {@code waiting}): the state machine, the
 * resolver's rules (all succeeded: queued once; one ended otherwise: cancelled naming it), the
 * races it closes, and a stress of random dependency graphs over two nodes sharing one store and
 * one queue, where every job must end in the state its graph implies, with exactly one ticket.
 */
class DependenciesTest extends JobServiceFixture {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String OK = "{'workload':{'steps':[{'op':'yield'}]}";
    static final String SLOW = "{'workload':{'steps':[{'op':'sleep','ms':300}]}";
    static final String FAILS = "{'workload':{'channels':[{'name':'c'}],'steps':[{'op':'close','channel':'c'},{'op':'close','channel':'c'}]}";

    /** Tickets enqueued per job, by any node. */
    final Map<String, AtomicInteger> tickets = new ConcurrentHashMap<>();
    final GoRuntime runtime2 = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    JobService jobs2;

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    /** A job body with {@code after}. */
    static JsonNode after(String body, String... ids) {
        StringBuilder b = new StringBuilder(body).append(",'after':[");
        for (int i = 0; i < ids.length; i++) {
            b.append(i == 0 ? "'" : ",'").append(ids[i]).append('\'');
        }
        return json(b.append("]}").toString());
    }

    static JsonNode body(String s) {
        return json(s + "}");
    }

    JobQueue countingQueue(JobQueue q) {
        return new ForwardingJobQueue(q) {
            @Override
            public void enqueue(JobTicket t) {
                tickets.computeIfAbsent(t.jobId(), k -> new AtomicInteger()).incrementAndGet();
                super.enqueue(t);
            }

            @Override
            public boolean holdsTicketOf(String jobId) {
                return d.holdsTicketOf(jobId);
            }

            @Override
            public Duration leaseTime() {
                return d.leaseTime();
            }
        };
    }

    /** One embedded node (its store in its memory), with the given properties. */
    void embedded(Map<String, String> props) {
        ServiceProperties p = TestProperties.service(props);
        ServiceMetrics metrics = new ServiceMetrics(meters);
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        jobs = EmbeddedJobs.start(runtime, TestChannels.soleNode(p, metrics, budget), p, metrics, Clock.systemUTC(), budget).jobs();
    }

    /** Two nodes over one shared store and one queue: what a cluster's nodes share, held in memory. */
    void twoNodes() {
        JobStore store = new ForwardingJobStore(InMemoryJobStore.unbounded(Clock.systemUTC())) {};
        JobQueue queue = countingQueue(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(1), 5));
        clusterNode(queue, store, leader("n1", n -> true));
        ServiceProperties p = TestProperties.service(Map.of());
        ServiceMetrics metrics = new ServiceMetrics(new SimpleMeterRegistry());
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        jobs2 = new JobService(runtime2, TestChannels.soleNode(p, metrics, budget), p, metrics,
                new JobSpecs(new WorkloadParser(p.limits()), new WorkloadTemplates()), Clock.systemUTC(), budget, queue, store,
                new io.gosched.service.job.spi.JobNode() {
                    @Override
                    public String id() {
                        return "n2";
                    }

                    @Override
                    public boolean isLeader() {
                        return false;
                    }

                    @Override
                    public boolean isPresent(String nodeId) {
                        return true;
                    }
                }, new ServiceShutdown());
    }

    @AfterEach
    void stopSecond() throws InterruptedException {
        if (jobs2 != null) {
            jobs2.cancelAll(Duration.ofSeconds(5));
        }
        runtime2.shutdown(Duration.ofSeconds(5));
    }

    JobView await(JobService on, String id, JobState state) {
        return JobAwait.state(on, id, state, Duration.ofSeconds(60));
    }

    // ---------------------------------------------------------------- state machine

    @Test
    void waitingMovesOnlyToQueuedOrCancelled() {
        assertThat(JobState.WAITING.isFinal()).isFalse();
        assertThat(JobState.WAITING.json()).isEqualTo("waiting");
        assertThat(JobState.of("waiting")).isEqualTo(JobState.WAITING);
        for (JobState to : JobState.values()) {
            assertThat(JobState.WAITING.canMoveTo(to)).as("waiting -> " + to.json())
                    .isEqualTo(to == JobState.QUEUED || to == JobState.CANCELLED);
            assertThat(to.canMoveTo(JobState.WAITING)).as(to.json() + " -> waiting: a job never waits again").isFalse();
        }
        JobRecord.Status w = JobRecord.Status.waiting();
        assertThat(w.released(Instant.EPOCH).state()).isEqualTo(JobState.QUEUED);
        assertThat(w.released(Instant.EPOCH).ticket()).isEqualTo(1);
        assertThatThrownBy(() -> w.claimed("n", Instant.EPOCH)).as("a waiting job has no ticket to claim")
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> JobRecord.Status.queued(Instant.EPOCH).released(Instant.EPOCH)).isInstanceOf(IllegalStateException.class);
    }

    // ---------------------------------------------------------------- the rules

    @Test
    void aJobWaitsUntilEveryJobItNamesSucceededThenRunsOnce() {
        embedded(Map.of());
        String a = jobs.submit(body(SLOW), null).job().id();
        String b = jobs.submit(body(OK), null).job().id();
        JobView c = jobs.submit(after(OK, a, b), null).job();
        assertThat(c.state()).isEqualTo(JobState.WAITING);
        assertThat(c.after()).extracting(JobView.AfterView::id).containsExactly(a, b);
        JobView done = await(jobs, c.id(), JobState.SUCCEEDED);
        JobView va = jobs.get(a);
        assertThat(va.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(done.startedAt()).as("c starts after a ended").isAfterOrEqualTo(va.finishedAt());
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(done.after()).extracting(JobView.AfterView::state).containsExactly("succeeded", "succeeded");
    }

    @Test
    void aJobWhoseDependencyFailsIsCancelledNamingItAndTheChainFollows() {
        embedded(Map.of());
        String ok = jobs.submit(body(OK), null).job().id();
        String bad = jobs.submit(body(SLOW.replace("'steps':[", "'channels':[{'name':'c'}],'steps':[{'op':'close','channel':'c'},"
                + "{'op':'close','channel':'c'},")), null).job().id();
        String c = jobs.submit(after(OK, ok, bad), null).job().id();
        String d = jobs.submit(after(OK, c), null).job().id();
        await(jobs, bad, JobState.FAILED);
        JobView vc = await(jobs, c, JobState.CANCELLED);
        assertThat(vc.error().reason()).isEqualTo(JobRecord.Failure.DEPENDENCY);
        assertThat(vc.error().pointer()).isEqualTo("/after/1");
        assertThat(vc.error().detail()).contains(bad).contains("failed");
        assertThat(vc.attempt()).as("never ran").isZero();
        JobView vd = await(jobs, d, JobState.CANCELLED);
        assertThat(vd.error().detail()).contains(c).contains("cancelled");
    }

    @Test
    void dependenciesThatEndedBeforeTheSubmissionAreSeenAtOnce() {
        embedded(Map.of());
        String ok = jobs.submit(body(OK), null).job().id();
        String bad = jobs.submit(body(FAILS), null).job().id();
        await(jobs, ok, JobState.SUCCEEDED);
        await(jobs, bad, JobState.FAILED);
        JobView runs = jobs.submit(after(OK, ok), null).job();
        assertThat(runs.state()).as("released by the re-check after the create").isIn(JobState.QUEUED, JobState.RUNNING, JobState.SUCCEEDED);
        await(jobs, runs.id(), JobState.SUCCEEDED);
        JobView dropped = jobs.submit(after(OK, ok, bad), null).job();
        assertThat(dropped.state()).isEqualTo(JobState.CANCELLED);
        assertThat(dropped.error().detail()).contains(bad);
    }

    @Test
    void unknownIdsAreRefusedByPointer() {
        embedded(Map.of());
        String ok = jobs.submit(body(OK), null).job().id();
        assertThatThrownBy(() -> jobs.submit(after(OK, ok, "no-such-job", "nor-this"), null))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.violations()).extracting(Violation::pointer)
                        .containsExactly("/after/1", "/after/2"));
        assertThatThrownBy(() -> jobs.submit(after(OK, ok, ok), null))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.violations()).extracting(Violation::pointer)
                        .containsExactly("/after/1"));
        String[] many = new String[101];
        for (int i = 0; i < many.length; i++) {
            many[i] = "job-" + i;
        }
        assertThatThrownBy(() -> jobs.submit(after(OK, many), null))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.violations()).extracting(Violation::pointer)
                        .containsExactly("/after"));
    }

    @Test
    void deleteCancelsAWaitingJobForGood() throws InterruptedException {
        embedded(Map.of());
        String a = jobs.submit(body(SLOW), null).job().id();
        String w = jobs.submit(after(OK, a), null).job().id();
        JobService.Cancelled c = jobs.cancel(w);
        assertThat(c.done()).isTrue();
        assertThat(c.job().state()).isEqualTo(JobState.CANCELLED);
        await(jobs, a, JobState.SUCCEEDED);
        // the resolution of a's end ran meanwhile (on its own thread): give it the time to be wrong
        Thread.sleep(300);
        assertThat(jobs.get(w).state()).isEqualTo(JobState.CANCELLED);
        assertThat(jobs.get(w).attempt()).isZero();
    }

    @Test
    void waitingJobsCountAgainstMaxQueuedJobs() {
        embedded(Map.of("gosched.api.admission.max-queued-jobs", "2"));
        String a = jobs.submit(body("{'workload':{'steps':[{'op':'sleep','ms':5000}]}"), null).job().id();
        await(jobs, a, JobState.RUNNING);
        jobs.submit(after(OK, a), null);
        jobs.submit(after(OK, a), null);
        assertThatThrownBy(() -> jobs.submit(after(OK, a), null)).isInstanceOf(RefusedException.class);
        assertThatThrownBy(() -> jobs.submit(body(OK), null)).isInstanceOf(RefusedException.class);
    }

    @Test
    void aResultStepTakesTheResultOfAJobItWaitedFor() {
        embedded(Map.of());
        String a = jobs.submit(json("{'workload':{'channels':[{'name':'c','capacity':1}],'steps':[{'op':'send','channel':'c',"
                + "'value':{'answer':42}},{'op':'recv','channel':'c'}]}}"), null).job().id();
        String b = jobs.submit(json("{'workload':{'steps':[{'op':'yield'},{'op':'result','of':'" + a + "'}]},'after':['" + a + "']}"),
                null).job().id();
        JobView vb = await(jobs, b, JobState.SUCCEEDED);
        assertThat(vb.result().lastReceived().get("answer").asInt()).isEqualTo(42);
        String none = jobs.submit(body(OK), null).job().id();
        String c = jobs.submit(json("{'workload':{'steps':[{'op':'result','of':'" + none + "'}]},'after':['" + none + "']}"), null)
                .job().id();
        assertThat(await(jobs, c, JobState.SUCCEEDED).result().lastReceived().isNull()).as("a job that received nothing: null")
                .isTrue();
    }

    @Test
    void aResultStepNamesOnlyAJobOfItsAfter() {
        embedded(Map.of());
        String a = jobs.submit(body(OK), null).job().id();
        String other = jobs.submit(body(OK), null).job().id();
        assertThatThrownBy(() -> jobs.submit(json("{'workload':{'steps':[{'op':'loop','times':2,'steps':[{'op':'result','of':'"
                + other + "'}]}]},'after':['" + a + "']}"), null))
                .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.violations()).extracting(Violation::pointer)
                        .containsExactly("/workload/steps/0/steps/0/of"));
    }

    static JsonNode batch(int n) {
        StringBuilder b = new StringBuilder("{'jobs':[");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",").append("{'key':'k").append(i).append("',").append(i > 0 ? "'after':['k" + (i - 1) + "']," : "")
                    .append(SLOW.substring(1)).append('}');
        }
        return json(b.append("]}").toString());
    }

    /** A batch whose store fails its third create, or whose queue fails its second enqueue, over a shared store: none of it stays. */
    @Test
    void aBatchThatFailsMidwayLeavesNothing() {
        InMemoryJobStore backing = InMemoryJobStore.unbounded(Clock.systemUTC());
        AtomicInteger creates = new AtomicInteger();
        JobStore store = new ForwardingJobStore(backing) {
            @Override
            public java.util.Optional<io.gosched.service.job.spi.Versioned<JobRecord>> create(JobRecord job) {
                if (creates.incrementAndGet() == 3) {
                    throw new io.gosched.service.error.BackendUnavailableException("store", "gone mid-batch", Duration.ofSeconds(1), null);
                }
                return super.create(job);
            }
        };
        AtomicInteger enqueues = new AtomicInteger();
        InMemoryJobQueue backingQueue = new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5);
        JobQueue queue = new ForwardingJobQueue(backingQueue) {
            @Override
            public void enqueue(JobTicket t) {
                if (enqueues.incrementAndGet() == 2) {
                    throw new io.gosched.service.error.BackendUnavailableException("queue", "gone mid-batch", Duration.ofSeconds(1), null);
                }
                super.enqueue(t);
            }
        };
        clusterNode(queue, store, leader("n1", n -> true));
        assertThatThrownBy(() -> jobs.submitBatch(batch(5))).isInstanceOf(io.gosched.service.error.BackendUnavailableException.class);
        assertThat(backing.list()).as("the two records created before the failure are removed").isEmpty();
        // the next batch: all its records are created, two wait for nothing, and the second of their tickets fails
        JsonNode two = json("{'jobs':[{" + SLOW.substring(1) + "},{" + SLOW.substring(1) + "},{'after':[],'workload':{'steps':[{'op':'yield'}]}}]}");
        assertThatThrownBy(() -> jobs.submitBatch(two)).isInstanceOf(io.gosched.service.error.BackendUnavailableException.class);
        assertThat(backing.list()).isEmpty();
        assertThat(backingQueue.depth()).as("the first ticket withdrawn").isZero();
        assertThat(jobs.submitBatch(batch(3))).hasSize(3);
        assertThat(backing.list()).hasSize(3);
    }

    /**
     * The writer of the release's CAS dies before it enqueues the ticket (here: the queue loses
     * that one ticket): the leader's chores find the queued record with no ticket and enqueue it.
     */
    @Test
    void aReleaseWhoseTicketWasLostIsQueuedAgainByTheChores() {
        JobStore store = new ForwardingJobStore(InMemoryJobStore.unbounded(Clock.systemUTC())) {};
        Set<String> dropOnce = ConcurrentHashMap.newKeySet();
        JobQueue queue = new ForwardingJobQueue(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(1), 5)) {
            @Override
            public void enqueue(JobTicket t) {
                tickets.computeIfAbsent(t.jobId(), k -> new AtomicInteger()).incrementAndGet();
                if (!dropOnce.remove(t.jobId())) {
                    super.enqueue(t);
                }
            }

            @Override
            public boolean holdsTicketOf(String jobId) {
                return d.holdsTicketOf(jobId);
            }

            @Override
            public Duration leaseTime() {
                return d.leaseTime();
            }
        };
        clusterNode(queue, store, leader("n1", n -> true));
        String a = jobs.submit(body(SLOW), null).job().id();
        String w = jobs.submit(after(OK, a), null).job().id();
        dropOnce.add(w);
        JobView v = await(jobs, w, JobState.SUCCEEDED);
        assertThat(v.attempt()).isEqualTo(1);
        assertThat(tickets.get(w).get()).as("the lost one, then the chores'").isEqualTo(2);
        assertThat(meters.get("gosched.jobs.requeued").tag("cause", "unticketed").counter().count()).isEqualTo(1.0);
    }

    /** A dependency removed (retention) while a job waits on it: the waiting job is cancelled, naming it as gone. */
    @Test
    void aDependencyThatIsGoneCancelsTheWaitingJob() {
        InMemoryJobStore backing = InMemoryJobStore.unbounded(Clock.systemUTC());
        JobStore store = new ForwardingJobStore(backing) {};
        clusterNode(new InMemoryJobQueue(Clock.systemUTC(), Duration.ofSeconds(30), 5), store, leader("n1", n -> true));
        String a = jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]},'notBefore':'" + Instant.now().plusSeconds(60) + "'}"),
                null).job().id();
        String w = jobs.submit(after(OK, a), null).job().id();
        assertThat(jobs.get(w).state()).isEqualTo(JobState.WAITING);
        // its record removed while it is still queued: no final state is ever written for it
        io.gosched.service.job.spi.Versioned<JobRecord> v = backing.get(a).orElseThrow();
        assertThat(backing.remove(a, v.revision())).isTrue();
        JobView vw = await(jobs, w, JobState.CANCELLED);
        assertThat(vw.error().detail()).contains(a).contains("gone");
        assertThat(vw.after()).extracting(JobView.AfterView::state).containsExactly("gone");
    }

    // ---------------------------------------------------------------- races

    /**
     * Random dependency graphs over two nodes that share their store and queue (each resolves
     * every waiting job the watch shows it, so their CASes race), two Ps each: every job ends in
     * the state its graph implies, a job that ran did so once and after all its dependencies
     * succeeded, and no job got more than one ticket.
     */
    @Test
    void randomGraphsOverTwoNodesEndEveryJobRightExactlyOnce() {
        twoNodes();
        Random rnd = new Random(Long.getLong("gosched.seed", System.nanoTime()));
        int rounds = 3 * Integer.getInteger("gosched.stress", 1);
        for (int round = 0; round < rounds; round++) {
            int n = 120;
            List<String> ids = new ArrayList<>();
            Map<String, List<String>> deps = new HashMap<>();
            Map<String, Boolean> fails = new HashMap<>();
            for (int i = 0; i < n; i++) {
                List<String> after = new ArrayList<>();
                if (i > 0) {
                    int k = rnd.nextInt(4);
                    for (int j = 0; j < k; j++) {
                        String d = ids.get(rnd.nextInt(ids.size()));
                        if (!after.contains(d)) {
                            after.add(d);
                        }
                    }
                }
                boolean fail = rnd.nextInt(10) == 0;
                String base = fail ? FAILS : rnd.nextBoolean() ? OK : "{'workload':{'steps':[{'op':'sleep','ms':" + rnd.nextInt(20) + "}]}";
                JobService via = rnd.nextBoolean() ? jobs : jobs2;
                String id = via.submit(after.isEmpty() ? body(base) : after(base, after.toArray(String[]::new)), null).job().id();
                ids.add(id);
                deps.put(id, after);
                fails.put(id, fail);
            }
            Map<String, JobState> expected = new HashMap<>();
            for (String id : ids) { // in submission order: dependencies first
                boolean allOk = deps.get(id).stream().allMatch(d -> expected.get(d) == JobState.SUCCEEDED);
                expected.put(id, !allOk ? JobState.CANCELLED : fails.get(id) ? JobState.FAILED : JobState.SUCCEEDED);
            }
            for (String id : ids) {
                JobView v = JobAwait.view(rnd.nextBoolean() ? jobs : jobs2, id, "final", Duration.ofSeconds(60), x -> x.state().isFinal());
                assertThat(v.state()).as("job " + id + " after " + deps.get(id)).isEqualTo(expected.get(id));
                boolean ran = deps.get(id).stream().allMatch(d -> expected.get(d) == JobState.SUCCEEDED);
                assertThat(v.attempt()).as("attempts of " + id).isEqualTo(ran ? 1 : 0);
                int t = tickets.getOrDefault(id, new AtomicInteger()).get();
                assertThat(t).as("tickets of " + id).isEqualTo(ran ? 1 : 0);
                if (!ran) {
                    assertThat(v.error().reason()).isEqualTo(JobRecord.Failure.DEPENDENCY);
                } else {
                    for (String d : deps.get(id)) {
                        assertThat(v.startedAt()).as(id + " started after " + d + " ended").isAfterOrEqualTo(jobs.get(d).finishedAt());
                    }
                }
            }
        }
    }
}
