package io.gosched.api;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The job and channel meters the team agreed on (CONTRACT.md "Service-wide names"), recorded
 * only when a {@link MeterRegistry} exists: without one every call is a no-op. Tags take bounded
 * values only (state, op, outcome), never ids or names a client chose.
 *
 * <p>Thread-safe; meters are created once and cached.
 */
public final class ApiMetrics {

    private final MeterRegistry registry;
    private final Counter submitted;
    private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();

    /** @param registry the registry to record into, or {@code null} to record nothing */
    public ApiMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.submitted = registry == null ? null
                : Counter.builder("gosched.jobs.submitted").description("jobs accepted by POST /api/v1/jobs").register(registry);
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

    public void jobSubmitted() {
        if (submitted != null) {
            submitted.increment();
        }
    }

    /** @param state one of succeeded, failed, cancelled, timed_out */
    public void jobFinished(String state, Duration duration) {
        if (registry == null) {
            return;
        }
        counters.computeIfAbsent("finished:" + state, k -> Counter.builder("gosched.jobs.finished").tag("state", state)
                .description("jobs that reached a final state").register(registry)).increment();
        timers.computeIfAbsent(state, k -> Timer.builder("gosched.jobs.duration").tag("state", state)
                .description("run time of a job's last attempt").register(registry)).record(duration);
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
