package io.gosched.service.schedule.spi;

import java.util.List;
import java.util.Optional;

import io.gosched.service.job.spi.Versioned;

/**
 * Schedules, readable and writable from every node. Every write is a compare-and-set on the
 * record's revision: two nodes deciding one tick never both win, which is what makes a tick fire
 * once. Embedded mode keeps them in this process's memory; cluster mode in a NATS KV bucket.
 *
 * <p>Thread-safe. Methods may block on the network for a bounded time; never call them from a
 * goroutine or an event loop.
 */
public interface ScheduleStore {

    /**
     * Stores a new schedule.
     *
     * @return the stored version, or empty if a schedule of that name exists
     * @throws io.gosched.service.error.BackendUnavailableException when the store cannot be reached
     */
    Optional<Versioned<ScheduleRecord>> create(ScheduleRecord schedule);

    /** The schedule as last written, or empty. */
    Optional<Versioned<ScheduleRecord>> get(String name);

    /** Compare-and-set: writes {@code next} only if its revision is still {@code expectedRevision}; empty when it lost. */
    Optional<Versioned<ScheduleRecord>> replace(ScheduleRecord next, long expectedRevision);

    /** Removes the schedule if its revision is still {@code expectedRevision}; false when it lost. */
    boolean remove(String name, long expectedRevision);

    /** Every schedule, by name; may lag behind writes of other nodes by a few milliseconds. */
    List<Versioned<ScheduleRecord>> list();
}
