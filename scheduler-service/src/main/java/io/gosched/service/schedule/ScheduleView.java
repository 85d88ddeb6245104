package io.gosched.service.schedule;

import java.time.Instant;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.gosched.service.job.spi.JobState;
import io.swagger.v3.oas.annotations.media.Schema;
import tools.jackson.databind.JsonNode;

/**
 * A schedule as GET /api/v1/schedules/{name} shows it.
 *
 * @param nextFireAt      the next tick; absent while paused (nothing fires) or when the expression never matches again
 * @param nextFireTimes   the next {@code n} ticks, only when asked with {@code ?next=n}
 * @param lastFireAt      the tick of the last job this schedule made (or the instant of the last trigger); absent before
 * @param lastJobId       that job's id
 * @param lastJobState    that job's state; absent once retention removed the job
 */
@Schema(name = "Schedule")
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ScheduleView(String name,
        @Schema(description = "A cron expression (Spring's six fields, seconds first; five fields: seconds 0; or a macro such as "
                + "@daily); absent with every", example = "0 0 3 * * *") String cron,
        @Schema(description = "An ISO-8601 duration, at least PT1S; absent with cron", example = "PT30S") String every,
        @Schema(description = "The IANA zone a cron expression reads the wall clock of", example = "Europe/Berlin") String timeZone,
        @Schema(description = "The job body each tick submits, as POST /api/v1/jobs takes it") JsonNode job,
        @Schema(allowableValues = {"skip", "allow", "cancel-previous"}) String overlap,
        @Schema(allowableValues = {"skip", "run-once"}) String misfire,
        boolean paused, Instant createdAt,
        @Schema(description = "The next tick; absent while paused", nullable = true) Instant nextFireAt,
        @Schema(description = "The next n ticks, with ?next=n", nullable = true) List<Instant> nextFireTimes,
        @Schema(description = "The tick of the last job made (or the last trigger)", nullable = true) Instant lastFireAt,
        @Schema(description = "The last job's id", nullable = true) String lastJobId,
        @Schema(description = "The last job's state", nullable = true) JobState lastJobState) {}
