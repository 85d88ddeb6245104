package io.gosched.service.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.UnaryOperator;

import io.gosched.service.error.ConflictException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.job.JobService;
import io.gosched.service.job.JobView;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import io.gosched.service.schedule.spi.ScheduleStore;
import tools.jackson.databind.JsonNode;

/**
 * Schedules as their callers see them: made, read, redefined, paused, resumed, triggered and
 * deleted over the {@link ScheduleStore}; {@link ScheduleFiring} fires their ticks. Each write is a
 * compare-and-set, retried on a lost race a bounded number of times.
 *
 * <p>Thread-safe. May block on a shared store: call it from a request's worker thread, never an
 * event loop.
 */
public final class ScheduleService {

    /** The most schedules there may be: each has its own meters, and every node reads them all every round. */
    public static final int MAX_SCHEDULES = 1000;
    /** The most upcoming ticks a view lists ({@code ?next=n}). */
    public static final int MAX_NEXT = 100;
    /** Lost compare-and-sets before a write gives up (the record is being fired under it by other nodes). */
    static final int CAS_ATTEMPTS = 50;

    private final ScheduleStore store;
    private final JobService jobs;
    private final ScheduleParser parser;
    private final ScheduleMetrics metrics;
    private final Clock clock;

    public ScheduleService(ScheduleStore store, JobService jobs, ScheduleMetrics metrics, Clock clock) {
        this.store = store;
        this.jobs = jobs;
        this.parser = new ScheduleParser(jobs);
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * The id of the job tick {@code tick} of schedule {@code name} makes, on any node: a name-based
     * UUID of {@code schedule:<name>:<epoch ms of the tick>}.
     */
    public static String jobId(String name, Instant tick) {
        return UUID.nameUUIDFromBytes(("schedule:" + name + ":" + tick.toEpochMilli()).getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** The id of a manual trigger's job, distinct from every tick's. */
    static String triggerJobId(String name, Instant at) {
        return UUID.nameUUIDFromBytes(("schedule:" + name + ":trigger:" + at.toEpochMilli()).getBytes(StandardCharsets.UTF_8))
                .toString();
    }

    /** POST: a new schedule; its first tick is the first after now. A conflict if the name is taken. */
    public ScheduleView create(JsonNode body) {
        ScheduleRecord r = parser.parse(body, null, clock.instant());
        if (store.list().size() >= MAX_SCHEDULES) {
            throw new RefusedException(RefusedException.Reason.OVERLOADED, MAX_SCHEDULES
                    + " schedules exist, the most there may be; delete one first", Duration.ofSeconds(60));
        }
        Versioned<ScheduleRecord> v = store.create(r).orElseThrow(() -> new ConflictException(ConflictException.Reason.SCHEDULE_EXISTS,
                "schedule '" + r.name() + "' exists; PUT /api/v1/schedules/" + r.name() + " redefines it").with("schedule", r.name()));
        return view(v.value(), 0);
    }

    /** PUT: the schedule redefined; its ticks count from now, its last job is kept. */
    public ScheduleView replace(String name, JsonNode body) {
        ScheduleRecord next = parser.parse(body, name, clock.instant());
        return view(update(name, r -> r.redefined(next, clock.instant())), 0);
    }

    public ScheduleView get(String name, int next) {
        return view(find(name).value(), next);
    }

    /** Every schedule, by name. */
    public List<ScheduleView> list(int next) {
        return store.list().stream().map(v -> view(v.value(), next)).toList();
    }

    /** DELETE: the schedule goes; jobs it made stay. */
    public ScheduleView delete(String name) {
        for (int i = 0; i < CAS_ATTEMPTS; i++) {
            Versioned<ScheduleRecord> v = find(name);
            if (store.remove(name, v.revision())) {
                metrics.removed(name);
                return view(v.value().withPaused(true, clock.instant()), 0);
            }
        }
        throw busy(name);
    }

    public ScheduleView pause(String name) {
        return view(update(name, r -> r.withPaused(true, clock.instant())), 0);
    }

    /** Resume: ticks that passed while paused are passed over (not misfires); the next is the first after now. */
    public ScheduleView resume(String name) {
        return view(update(name, r -> r.paused() ? r.withPaused(false, clock.instant()) : r), 0);
    }

    /**
     * POST .../trigger: one job now, outside the ticks (paused or not, whatever the overlap
     * policy), with {@code scheduledFor} the instant of the trigger; recorded as the last fire.
     */
    public JobView trigger(String name) {
        ScheduleRecord r = find(name).value();
        Instant now = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        String id = triggerJobId(name, now);
        JobView job = jobs.submitScheduled(r.job(), id, name, now).job();
        metrics.fired(name);
        try {
            // A tick's fire still being admitted keeps its place as the last fire (its admission is pending on it).
            update(name, s -> !s.submitted() || s.lastFireAt() != null && s.lastFireAt().isAfter(now) ? s
                    : new ScheduleRecord(s.name(), s.cron(), s.every(), s.timeZone(), s.job(), s.overlap(), s.misfire(), s.createdAt(),
                            s.anchor(), s.paused(), s.cursor(), now, id, true, s.lastJobId()));
        } catch (NotFoundException gone) {
            // deleted meanwhile: the job stands
        }
        return job;
    }

    Versioned<ScheduleRecord> find(String name) {
        return store.get(name).orElseThrow(() -> new NotFoundException("schedule", name));
    }

    private ScheduleRecord update(String name, UnaryOperator<ScheduleRecord> change) {
        for (int i = 0; i < CAS_ATTEMPTS; i++) {
            Versioned<ScheduleRecord> v = find(name);
            Optional<Versioned<ScheduleRecord>> w = store.replace(change.apply(v.value()), v.revision());
            if (w.isPresent()) {
                return w.get().value();
            }
        }
        throw busy(name);
    }

    private static ConflictException busy(String name) {
        return (ConflictException) new ConflictException(ConflictException.Reason.SCHEDULE_BUSY,
                "schedule '" + name + "' kept changing under the request; try again").with("schedule", name);
    }

    /** The view, with the next {@code next} ticks listed when {@code next > 0}. */
    ScheduleView view(ScheduleRecord r, int next) {
        Instant now = clock.instant();
        Ticks ticks = ScheduleParser.ticks(r);
        Instant from = r.cursor().isAfter(now) ? r.cursor() : now;
        Instant nextFire = r.paused() ? null : ticks.next(from);
        List<Instant> nextTimes = next <= 0 ? null : r.paused() ? List.of() : ticks.next(from, Math.min(next, MAX_NEXT));
        JobState lastState = null;
        if (r.lastJobId() != null) {
            try {
                lastState = jobs.get(r.lastJobId()).state();
            } catch (NotFoundException gone) {
                // removed by retention, or not admitted yet
            }
        }
        return new ScheduleView(r.name(), r.cron(), r.every() == null ? null : r.every().toString(), r.timeZone(), r.job(), r.overlap(),
                r.misfire(), r.paused(), r.createdAt(), nextFire, nextTimes, r.lastFireAt(), r.lastJobId(), lastState);
    }
}
