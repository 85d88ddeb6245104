package io.gosched.service.job;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;


import io.gosched.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.testing.ManualClock;
import io.gosched.service.testing.TestProperties;
import io.gosched.runtime.GoroutineInfo;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import static io.gosched.service.job.JobServiceTest.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Embedded mode's refill in place: a finishing attempt polls, claims and starts the next job on
 * its own goroutine (the in-memory queue answers a poll without blocking), and the dispatcher is
 * woken only when the queue ran dry. Every job still runs exactly once, in pull order, within the
 * running slots, and the slot counts return to zero.
 */
class JobDispatchInPlaceTest extends JobServiceFixture {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    ChannelService channels;

    void service(Map<String, String> props) {
        ServiceProperties p = TestProperties.service(new HashMap<>(props));
        ServiceMetrics metrics = new ServiceMetrics(new SimpleMeterRegistry());
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        channels = TestChannels.soleNode(p, metrics, budget);
        jobs = EmbeddedJobs.start(runtime, channels, p, metrics, clock, budget).jobs();
    }

    JobView await(String id, JobState state) {
        return JobAwait.state(jobs, id, state, Duration.ofSeconds(30));
    }

    /**
     * The dispatch counts once the last job's slot went back (a job's record is final a moment
     * before). The dispatcher's pull, waiting for the next submission, holds the free slots.
     */
    Dispatcher.Dispatch settled() {
        Await.holdsWithin(Duration.ofSeconds(10), () -> {
            Dispatcher.Dispatch d = jobs.dispatcher().dispatch();
            return d.running() == 0 && d.inFlight() == 0;
        });
        return jobs.dispatcher().dispatch(); // the caller's assertions name what did not settle
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "max-running-jobs {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {3, 20})
    void manyShortJobsInRandomFinishingOrderEachRunOnceAndTheSlotsEmpty(int max) throws Exception {
        // 3: every freed slot is polled for in place; 20: only two or more (a batch), fewer are the dispatcher's short look's
        int n = 3_000 * STRESS;
        service(Map.of("gosched.api.admission.max-running-jobs", String.valueOf(max),
                "gosched.api.admission.max-queued-jobs", String.valueOf(n + 10)));
        channels.registry().create("runs", n); // every run sends its number once: a job run twice sends twice
        Dispatcher engine = jobs.dispatcher();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger mostHeld = new AtomicInteger();
        Thread sampler = Thread.ofPlatform().start(() -> { // over-commit of the slots, seen as it happens
            while (!done.get()) {
                Dispatcher.Dispatch d = engine.dispatch();
                mostHeld.accumulateAndGet(d.running() + d.pulled(), Math::max);
                Thread.yield(); // sample often, but leave the CPU to the jobs when they need it
            }
        });
        ConcurrentLinkedQueue<String> ids = new ConcurrentLinkedQueue<>();
        List<Thread> submitters = new ArrayList<>();
        AtomicInteger next = new AtomicInteger();
        for (int t = 0; t < 3; t++) { // submissions race with the finishing attempts' polls and the dispatcher's pulls
            submitters.add(Thread.ofPlatform().start(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                for (int i; (i = next.getAndIncrement()) < n; ) {
                    // random lengths: attempts finish in another order than they started
                    String work = switch (r.nextInt(4)) {
                        case 0 -> "";
                        case 1 -> "{'op':'yield'},";
                        case 2 -> "{'op':'sleep','ms':" + r.nextInt(3) + "},";
                        default -> "{'op':'spawn','count':" + (1 + r.nextInt(3)) + ",'steps':[{'op':'yield'}]},{'op':'wait'},";
                    };
                    ids.add(jobs.submit(json("{'priority':" + r.nextInt(10) + ",'workload':{'steps':[" + work
                            + "{'op':'send','channel':'runs','value':" + i + "}]}}"), null).job().id());
                }
            }));
        }
        for (Thread t : submitters) {
            t.join();
        }
        for (String id : ids) {
            JobView v = await(id, JobState.SUCCEEDED);
            assertThat(v.attempt()).as("attempt of %s", id).isEqualTo(1);
        }
        Dispatcher.Dispatch d = settled();
        done.set(true);
        sampler.join();
        BitSet seen = new BitSet(n);
        for (int k = 0; k < n; k++) {
            JsonNode v = channels.recv("runs", Duration.ZERO).block().value();
            assertThat(seen.get(v.asInt())).as("job %d ran twice", v.asInt()).isFalse();
            seen.set(v.asInt());
        }
        assertThat(seen.cardinality()).isEqualTo(n);
        assertThat(channels.registry().view(channels.registry().get("runs")).len()).as("runs beyond one per job").isZero();
        assertThat(d).satisfies(x -> {
            assertThat(x.running()).isZero();
            assertThat(x.reserved()).isZero();
            assertThat(x.inFlight()).as("leases in flight").isZero(); // the dispatcher's idle pull holds the free slots meanwhile
            assertThat(x.waitingForRoom()).isZero();
            assertThat(x.handedOver()).isZero();
            assertThat(x.polledInPlace() + x.pulledByDispatcher()).as("tickets taken").isEqualTo(n);
        });
        assertThat(mostHeld.get()).as("slots held at once").isLessThanOrEqualTo(max);
        assertThat(jobs.waitingJobs()).isZero();
    }

    @Test
    void aFinishedJobsSlotIsRefilledWithoutTheDispatcher() {
        int k = 40;
        service(Map.of("gosched.api.admission.max-running-jobs", "1"));
        channels.registry().create("gate", 0);
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'gate'}]}}"), null).job().id();
        await(blocker, JobState.RUNNING);
        List<String> queued = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            queued.add(jobs.submit(json("{'workload':{'steps':[{'op':'yield'}]}}"), null).job().id());
        }
        Dispatcher.Dispatch before = jobs.dispatcher().dispatch();
        assertThat(before.pulledByDispatcher()).isEqualTo(1); // the blocker, pulled when the queue was empty
        channels.send("gate", json("1"), Duration.ofSeconds(5)).block();
        queued.forEach(id -> await(id, JobState.SUCCEEDED));
        Dispatcher.Dispatch after = settled();
        long inPlace = after.polledInPlace() - before.polledInPlace();
        long byDispatcher = after.pulledByDispatcher() - before.pulledByDispatcher();
        assertThat(inPlace + byDispatcher).isEqualTo(k);
        // Each of the k jobs was polled by the attempt before it as it finished. The dispatcher may
        // take one in the instant a slot is free when its 200 ms look comes; it is told only when
        // the queue ran dry: once, at the last job (twice if it took one meanwhile).
        assertThat(inPlace).as("jobs started in place").isGreaterThanOrEqualTo(k - 2);
        assertThat(after.dispatcherWakeups() - before.dispatcherWakeups()).as("wake-ups of the dispatcher").isLessThanOrEqualTo(3);
        assertThat(after.running()).isZero();
    }

    @Test
    void aJobStartedAfterATemplatedOneCarriesOnlyItsOwnLabels() {
        service(Map.of("gosched.api.admission.max-running-jobs", "1"));
        channels.registry().create("gate", 0);
        channels.registry().create("hold", 0);
        String blocker = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'gate'}]}}"), null).job().id();
        await(blocker, JobState.RUNNING);
        String templated = jobs.submit(json("{'template':'ping-pong','params':{'rounds':5}}"), null).job().id();
        String plain = jobs.submit(json("{'workload':{'steps':[{'op':'recv','channel':'hold'}]}}"), null).job().id();
        channels.send("gate", json("1"), Duration.ofSeconds(5)).block();
        await(templated, JobState.SUCCEEDED);
        await(plain, JobState.RUNNING);
        // the templated job's goroutine refilled the slot; withLabels there would have added job=<plain> to template=ping-pong
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<GoroutineInfo> mine;
        do {
            mine = runtime.goroutines().stream().filter(g -> plain.equals(g.labels().get("job"))).toList();
        } while (mine.isEmpty() && System.nanoTime() < end);
        assertThat(mine).isNotEmpty().allSatisfy(g -> assertThat(g.labels()).isEqualTo(Map.of("job", plain)));
        channels.send("hold", json("1"), Duration.ofSeconds(5)).block();
        await(plain, JobState.SUCCEEDED);
    }
}
