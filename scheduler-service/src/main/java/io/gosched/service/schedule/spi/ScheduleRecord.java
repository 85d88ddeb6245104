package io.gosched.service.schedule.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import tools.jackson.databind.JsonNode;

/**
 * A schedule as the {@link ScheduleStore} keeps it: its definition as accepted, and how far its
 * ticks have been decided. Replaced as a whole by every compare-and-set, so that one node
 * decides each tick.
 *
 * @param name       the schedule's name (its key)
 * @param cron       the cron expression as given, or null with {@code every}
 * @param every      the period, or null with {@code cron}
 * @param timeZone   the zone a cron expression reads the wall clock of (an IANA id)
 * @param job        the job body each tick submits, as POST /api/v1/jobs takes it
 * @param overlap    {@code skip}, {@code allow} or {@code cancel-previous} (see {@code Overlap})
 * @param misfire    {@code skip} or {@code run-once} (see {@code Misfire})
 * @param createdAt  when the schedule was made
 * @param anchor     where {@code every}'s ticks count from: when the schedule was made or last redefined
 * @param paused     no tick fires while true
 * @param cursor     every tick at or before this instant has been decided (fired, skipped or missed);
 *                   only moves forward
 * @param lastFireAt the tick of the last job this schedule made (or the instant of a manual trigger), or null
 * @param lastJobId  that job's id, or null
 * @param submitted  false from the moment a node decided to fire {@code lastJobId} until it was admitted: a record
 *                   left false by a node that died in between is finished by another (the job's id makes it once)
 * @param previousJobId the job of the fire before {@code lastJobId}'s, which {@code cancel-previous} cancels; or null
 */
public record ScheduleRecord(String name, String cron, Duration every, String timeZone, JsonNode job, String overlap,
        String misfire, Instant createdAt, Instant anchor, boolean paused, Instant cursor, Instant lastFireAt, String lastJobId,
        boolean submitted, String previousJobId) {

    public ScheduleRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(timeZone, "timeZone");
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(overlap, "overlap");
        Objects.requireNonNull(misfire, "misfire");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(anchor, "anchor");
        Objects.requireNonNull(cursor, "cursor");
        if ((cron == null) == (every == null)) {
            throw new IllegalArgumentException("a schedule has exactly one of cron and every");
        }
    }

    /** Ticks up to {@code to} decided without a job (skipped, missed or paused over). */
    public ScheduleRecord decidedUpTo(Instant to) {
        return new ScheduleRecord(name, cron, every, timeZone, job, overlap, misfire, createdAt, anchor, paused,
                to.isAfter(cursor) ? to : cursor, lastFireAt, lastJobId, submitted, previousJobId);
    }

    /** Tick {@code tick} decided as a fire of job {@code jobId}, not admitted yet. */
    public ScheduleRecord firing(Instant tick, String jobId) {
        return new ScheduleRecord(name, cron, every, timeZone, job, overlap, misfire, createdAt, anchor, paused,
                tick.isAfter(cursor) ? tick : cursor, tick, jobId, false, lastJobId);
    }

    /** The fire of {@code lastJobId} admitted. */
    public ScheduleRecord submittedJob() {
        return new ScheduleRecord(name, cron, every, timeZone, job, overlap, misfire, createdAt, anchor, paused, cursor, lastFireAt,
                lastJobId, true, previousJobId);
    }

    public ScheduleRecord withPaused(boolean p, Instant now) {
        // Resuming decides every tick of the pause as passed over: they are not misfires.
        return new ScheduleRecord(name, cron, every, timeZone, job, overlap, misfire, createdAt, anchor, p,
                !p && now.isAfter(cursor) ? now : cursor, lastFireAt, lastJobId, submitted, previousJobId);
    }

    /** The same schedule under a new definition, its history kept; ticks count from {@code now}. */
    public ScheduleRecord redefined(ScheduleRecord next, Instant now) {
        return new ScheduleRecord(name, next.cron, next.every, next.timeZone, next.job, next.overlap, next.misfire, createdAt, now,
                paused, now.isAfter(cursor) ? now : cursor, lastFireAt, lastJobId, submitted, previousJobId);
    }
}
