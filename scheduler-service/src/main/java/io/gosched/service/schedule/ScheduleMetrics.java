package io.gosched.service.schedule;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;

/**
 * The schedules' meters (docs/telemetry.md): {@code gosched_schedule_fires_total{schedule}} (jobs
 * a tick made, on the node that decided the tick), {@code gosched_schedule_misfires_total{schedule}}
 * (ticks nobody fired in time), {@code gosched_schedule_skips_total{schedule,reason}} (ticks that made
 * no job: {@code overlap}, or {@code refused} when the job service would not take the job), and the
 * gauges {@code gosched_schedule_next_fire_seconds} and {@code gosched_schedule_last_fire_seconds}
 * (epoch seconds) per schedule. The schedule tag is a name a client chose, bounded by the most
 * schedules there may be ({@link ScheduleService#MAX_SCHEDULES}); a deleted schedule's meters go.
 * A no-op without a registry. Thread-safe.
 */
public final class ScheduleMetrics {

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final MultiGauge nextFire;
    private final MultiGauge lastFire;

    /** A schedule's fire times for the gauges, epoch seconds, null when it has none. */
    public record Times(String schedule, Double next, Double last) {}

    public ScheduleMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.nextFire = registry == null ? null : MultiGauge.builder("gosched.schedule.next.fire").baseUnit("seconds")
                .description("the schedule's next tick, epoch seconds (absent while paused)").register(registry);
        this.lastFire = registry == null ? null : MultiGauge.builder("gosched.schedule.last.fire").baseUnit("seconds")
                .description("the tick of the schedule's last job, epoch seconds").register(registry);
    }

    void fired(String schedule) {
        count("gosched.schedule.fires", schedule, null, "jobs made by a schedule's ticks (on the node that decided the tick)", 1);
    }

    void misfired(String schedule, long ticks) {
        count("gosched.schedule.misfires", schedule, null, "ticks no node fired in time (nodes down or cut off)", ticks);
    }

    void skipped(String schedule, String reason) {
        count("gosched.schedule.skips", schedule, reason, "ticks that made no job: overlap (the last still ran) or refused", 1);
    }

    private void count(String meter, String schedule, String reason, String description, long n) {
        if (registry == null || n <= 0) {
            return;
        }
        String key = meter + "|" + schedule + "|" + reason;
        counters.computeIfAbsent(key, k -> {
            Counter.Builder b = Counter.builder(meter).tag("schedule", schedule).description(description);
            if (reason != null) {
                b.tag("reason", reason);
            }
            return b.register(registry);
        }).increment(n);
    }

    /** The gauges' rows: every schedule there is now; rows of schedules gone are removed. */
    void times(List<Times> rows) {
        if (registry == null) {
            return;
        }
        nextFire.register(rows.stream().filter(t -> t.next() != null)
                .map(t -> MultiGauge.Row.of(Tags.of("schedule", t.schedule()), t.next())).toList(), true);
        lastFire.register(rows.stream().filter(t -> t.last() != null)
                .map(t -> MultiGauge.Row.of(Tags.of("schedule", t.schedule()), t.last())).toList(), true);
    }

    /** A deleted schedule's counters go with it. */
    void removed(String schedule) {
        if (registry == null) {
            return;
        }
        counters.entrySet().removeIf(e -> {
            if (e.getKey().split("\\|")[1].equals(schedule)) {
                registry.remove(e.getValue());
                return true;
            }
            return false;
        });
    }
}
