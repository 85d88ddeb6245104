package io.gosched.service.metrics;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.gosched.service.budget.BudgetMeters;
import io.gosched.service.budget.MemoryBudget;
import io.gosched.service.budget.OpenLimit;
import io.gosched.service.budget.Retained;
import io.gosched.service.job.spi.JobState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The job, channel and memory-budget meters the team agreed on (docs/telemetry.md, the
 * {@code gosched_jobs_*} row of the meter table), recorded only when a {@link MeterRegistry}
 * exists: without one every call is a no-op. Tags take bounded values only (state, op, outcome,
 * kind, budget, reason), never ids or names a client chose.
 *
 * <p>Thread-safe; meters are created once and cached.
 */
public final class ServiceMetrics implements BudgetMeters {

    private final MeterRegistry registry;
    private final Counter submitted;
    private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();
    /** Per-job counters by their one tag's value, without building a key per call (a finish counts on every job). */
    private final ConcurrentMap<String, Counter> finished = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> evicted = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();
    /** The by-type meters of each job type seen so far (see {@link ByType}). */
    private final ConcurrentMap<String, ByType> byType = new ConcurrentHashMap<>();
    /** Told of every job that reached a final state; see {@link #onJobFinished}. */
    private final List<Consumer<String>> finishListeners = new CopyOnWriteArrayList<>();

    /** @param registry the registry to record into, or {@code null} to record nothing */
    public ServiceMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.submitted = registry == null ? null
                : Counter.builder("gosched.jobs.submitted").description("jobs accepted by POST /api/v1/jobs").register(registry);
        if (registry != null) {
            // Every final state's counter exists from the start, at 0. In a cluster the node that
            // finishes a job is whichever took its ticket, so a node can go a while without
            // finishing one; a counter made at its first finish left that node out of every
            // per-node rate (the dashboard's "jobs finished per node" showed one node of two:
            // ClusterDashboardTest) instead of showing it at 0.
            for (JobState st : JobState.values()) {
                if (st.isFinal()) {
                    finishedCounter(st.json());
                }
            }
        }
    }

    private Counter finishedCounter(String state) {
        Counter c = finished.get(state);
        return c != null ? c : finished.computeIfAbsent(state, k -> Counter.builder("gosched.jobs.finished").tag("state", state)
                .description("jobs that reached a final state").register(registry));
    }

    /** Registers the three level gauges; the suppliers must stay cheap (they run on every scrape). */
    public void gauges(Supplier<Number> liveJobs, Supplier<Number> queuedJobs, Supplier<Number> channels) {
        if (registry == null) {
            return;
        }
        Gauge.builder("gosched.jobs.live", liveJobs).description("jobs running now").strongReference(true).register(registry);
        Gauge.builder("gosched.jobs.queued", queuedJobs).description("jobs waiting: queued, delayed or backing off")
                .strongReference(true).register(registry);
        Gauge.builder("gosched.channels", channels).description("named channels that exist").strongReference(true).register(registry);
    }

    /**
     * {@code gosched_api_retained_bytes{kind}} for every {@link Retained} kind, the budget's size
     * {@code gosched_api_budget_max_bytes}, and the open streams and channel calls; refusal and
     * eviction counters start at zero for every value of their tag, so a dashboard sees a series
     * before the first refusal.
     */
    @Override
    public void budget(MemoryBudget budget, OpenLimit streams, OpenLimit channelCalls, List<String> budgets) {
        if (registry == null) {
            return;
        }
        MultiGauge.builder("gosched.api.retained").baseUnit("bytes")
                .description("bytes of the memory budget held, by what holds them").register(registry)
                .register(Arrays.stream(Retained.values())
                        .map(k -> MultiGauge.Row.of(Tags.of("kind", k.tag()), budget, b -> b.held(k))).toList());
        Gauge.builder("gosched.api.budget.max", budget, MemoryBudget::max).baseUnit("bytes")
                .description("size of the memory budget (gosched.api.limits.max-retained-bytes)").register(registry);
        Gauge.builder("gosched.api.streams.open", streams, OpenLimit::open)
                .description("SSE streams open now, telemetry and job events").register(registry);
        Gauge.builder("gosched.api.channel.calls.pending", channelCalls, OpenLimit::open)
                .description("HTTP channel sends and receives in flight").register(registry);
        budgets.forEach(b -> refusals(b));
        for (String reason : List.of("pressure", "count", "age")) {
            evictions(reason);
        }
    }

    /** A request refused by {@code budget} (the property's last segment, e.g. {@code max-retained-bytes}). */
    @Override
    public void budgetRefused(String budget) {
        if (registry != null) {
            refusals(budget).increment();
        }
    }

    /** Finished jobs dropped from retention: {@code pressure} (the memory budget), {@code count} or {@code age}. */
    public void jobsEvicted(String reason, int n) {
        if (registry != null && n > 0) {
            evictions(reason).increment(n);
        }
    }

    private Counter refusals(String budget) {
        return counters.computeIfAbsent("refused:" + budget, k -> Counter.builder("gosched.api.budget.refusals").tag("budget", budget)
                .description("requests refused by a memory budget or an open-request limit").register(registry));
    }

    private Counter evictions(String reason) {
        Counter c = evicted.get(reason);
        return c != null ? c : evicted.computeIfAbsent(reason, k -> Counter.builder("gosched.jobs.evicted").tag("reason", reason)
                .description("finished jobs dropped from retention, by why").register(registry));
    }

    /**
     * A job put back in the queue by its node's repair of a lost state (cluster mode):
     * {@code unanswered-claim} (a claim whose CAS landed without an answer) or {@code orphan}
     * (left running with no ticket and nobody to run it).
     */
    public void jobRequeued(String cause) {
        if (registry != null) {
            counters.computeIfAbsent("requeued:" + cause, k -> Counter.builder("gosched.jobs.requeued").tag("cause", cause)
                    .description("jobs put back in the queue after a lost claim answer or with nobody to run them").register(registry))
                    .increment();
        }
    }

    /**
     * A job accepted, of {@code type} ({@code JobType.of}): {@code gosched_jobs_submitted_total}
     * and {@code gosched_jobs_by_type_submitted_total{type}}.
     */
    public void jobSubmitted(String type) {
        if (submitted != null) {
            submitted.increment();
            byType(type).submitted.increment();
        }
    }

    /**
     * An attempt of a job of {@code type} failed or timed out, and the job's retry policy queued
     * it again: {@code gosched_jobs_by_type_retried_total{type}}. Counted by the node that wrote
     * the attempt's outcome; a manual retry ({@code POST .../retry}) and a repair's requeue
     * ({@code gosched_jobs_requeued_total}) are not retries of the policy and do not count.
     */
    public void jobRetried(String type) {
        if (registry != null) {
            byType(type).retried.increment();
        }
    }

    /**
     * An attempt of a job of {@code type} that ran on this node ended after {@code ran} (from its
     * claim to its outcome, as the record says), whatever the outcome, retried or final:
     * {@code gosched_jobs_by_type_attempt_duration_seconds{type}}. Attempts that never ran here
     * (cancelled while queued, lost, refused) are not observed.
     */
    public void attemptEnded(String type, Duration ran) {
        if (registry != null) {
            byType(type).attempts.record(ran);
        }
    }

    /**
     * The meters of one job type, all registered at its first sight, at zero: a type's series
     * exist on a node from then on, so a per-type rate shows 0, not a gap, on a node that has not
     * yet finished (or retried) a job of that type. The types are bounded ({@code JobType}).
     */
    private final class ByType {
        final Counter submitted;
        final Counter retried;
        final Timer attempts;
        final Map<String, Counter> finished = new HashMap<>();

        ByType(String type) {
            submitted = Counter.builder("gosched.jobs.by.type.submitted").tag("type", type)
                    .description("jobs accepted, by type (dsl, template:NAME, http, handler:NAME)").register(registry);
            retried = Counter.builder("gosched.jobs.by.type.retried").tag("type", type)
                    .description("failed or timed-out attempts the job's retry policy queued again, by type").register(registry);
            // The histogram is the meter's own, not a property's, so that an application without
            // scheduler-web's properties (the starter's) still exports buckets for p50/p99 by type.
            attempts = Timer.builder("gosched.jobs.by.type.attempt.duration").tag("type", type)
                    .description("run time of each attempt that ran on this node, from its claim to its outcome, by type")
                    .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(5))
                    .register(registry);
            for (JobState st : JobState.values()) {
                if (st.isFinal()) {
                    finished.put(st.json(), Counter.builder("gosched.jobs.by.type.finished").tag("type", type).tag("state", st.json())
                            .description("jobs that reached a final state, by type and state").register(registry));
                }
            }
        }
    }

    private ByType byType(String type) {
        String t = type == null ? "dsl" : type;
        ByType b = byType.get(t);
        return b != null ? b : byType.computeIfAbsent(t, ByType::new);
    }

    /**
     * Calls listener with the state (succeeded, failed, cancelled, timed_out) of every job that
     * reaches a final state, in memory or cluster mode: every such job passes through {@link
     * #jobFinished}. The listener runs on the finishing thread (often a goroutine of the
     * service's runtime), right after the job's final state became visible: it must be quick and must not
     * block; an exception it throws is dropped.
     */
    public void onJobFinished(Consumer<String> listener) {
        finishListeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /**
     * A job of {@code type} ({@code JobType.of}) reached {@code state}: as {@link #jobFinished(String,
     * Duration)}, and {@code gosched_jobs_by_type_finished_total{type,state}}.
     */
    public void jobFinished(String type, String state, Duration duration) {
        jobFinished(state, duration);
        if (registry != null) {
            Counter c = byType(type).finished.get(state);
            if (c != null) {
                c.increment();
            }
        }
    }

    /**
     * A job reached {@code state}: the listeners, {@code gosched_jobs_finished_total{state}} and
     * {@code gosched_jobs_duration_seconds{state}} (its last attempt's run time). The by-type
     * meters are {@link #jobFinished(String, String, Duration)}'s.
     *
     * @param state one of succeeded, failed, cancelled, timed_out
     */
    public void jobFinished(String state, Duration duration) {
        for (Consumer<String> l : finishListeners) {
            try {
                l.accept(state);
            } catch (RuntimeException ignored) {
                // a listener's failure is not the job's
            }
        }
        if (registry == null) {
            return;
        }
        finishedCounter(state).increment();
        Timer t = timers.get(state);
        (t != null ? t : timers.computeIfAbsent(state, k -> Timer.builder("gosched.jobs.duration").tag("state", state)
                .description("run time of a job's last attempt").register(registry))).record(duration);
    }

    /**
     * @param op      send, recv or close
     * @param outcome ok, timeout, closed, shutdown, withdrawn, requeued, lost, ...
     */
    public void channelOp(String op, String outcome) {
        if (registry == null) {
            return;
        }
        counters.computeIfAbsent("chan:" + op + ":" + outcome, k -> Counter.builder("gosched.channel.operations")
                .tag("op", op).tag("outcome", outcome).description("HTTP channel operations by result").register(registry))
                .increment();
    }
}
