package io.gosched.service.schedule.memory;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import io.gosched.service.schedule.spi.ScheduleStore;

/**
 * Embedded mode's schedules: in this process's memory, gone with it. Revisions count per map, so
 * a removed and re-created schedule never reuses a revision. Thread-safe; never blocks beyond the
 * map's bin locks.
 */
public final class InMemoryScheduleStore implements ScheduleStore {

    private final ConcurrentHashMap<String, Versioned<ScheduleRecord>> schedules = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong revisions = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public Optional<Versioned<ScheduleRecord>> create(ScheduleRecord schedule) {
        Versioned<ScheduleRecord> v = new Versioned<>(schedule, revisions.incrementAndGet());
        return schedules.putIfAbsent(schedule.name(), v) == null ? Optional.of(v) : Optional.empty();
    }

    @Override
    public Optional<Versioned<ScheduleRecord>> get(String name) {
        return Optional.ofNullable(schedules.get(name));
    }

    @Override
    public Optional<Versioned<ScheduleRecord>> replace(ScheduleRecord next, long expectedRevision) {
        Versioned<ScheduleRecord>[] out = newResult();
        schedules.computeIfPresent(next.name(), (k, cur) -> {
            if (cur.revision() != expectedRevision) {
                return cur;
            }
            out[0] = new Versioned<>(next, revisions.incrementAndGet());
            return out[0];
        });
        return Optional.ofNullable(out[0]);
    }

    @Override
    public boolean remove(String name, long expectedRevision) {
        boolean[] removed = {false};
        schedules.computeIfPresent(name, (k, cur) -> {
            if (cur.revision() != expectedRevision) {
                return cur;
            }
            removed[0] = true;
            return null;
        });
        return removed[0];
    }

    @Override
    public List<Versioned<ScheduleRecord>> list() {
        return schedules.values().stream().sorted(Comparator.comparing(v -> v.value().name())).toList();
    }

    @SuppressWarnings("unchecked")
    private static Versioned<ScheduleRecord>[] newResult() {
        return (Versioned<ScheduleRecord>[]) new Versioned<?>[1];
    }
}
