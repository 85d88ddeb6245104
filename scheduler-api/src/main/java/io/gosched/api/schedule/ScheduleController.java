package io.gosched.api.schedule;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import io.gosched.api.error.QueryParameters;
import io.gosched.service.job.JobView;
import io.gosched.service.schedule.ScheduleService;
import io.gosched.service.schedule.ScheduleView;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

/**
 * Schedules over HTTP. The body is read as a JSON tree and validated by hand (the schedule's
 * parser, and the job parser for its {@code job}) so that every violation is named by its JSON
 * pointer. Every call runs on Reactor's bounded-elastic threads: in cluster mode it reads and
 * writes NATS.
 */
@RestController
@RequestMapping("/api/v1/schedules")
@Tag(name = "Schedules", description = "Recurring jobs: a cron expression or a period, one job per tick across the cluster")
class ScheduleController {

    /** The body of POST and PUT as the OpenAPI document describes it. */
    @Schema(name = "ScheduleDefinition", description = "A schedule: exactly one of cron or every, and the job each tick submits")
    record Definition(
            @Schema(description = "1 to 64 letters, digits, '_' or '-'; in PUT, absent or the name in the URL",
                    pattern = "[A-Za-z0-9][A-Za-z0-9_-]{0,63}", example = "nightly-report") String name,
            @Schema(description = "Spring's cron syntax: six fields, seconds first (0 0 3 * * *), the classic five (seconds 0), "
                    + "or a macro (@yearly, @monthly, @weekly, @daily, @hourly)", example = "0 0 3 * * *") String cron,
            @Schema(description = "An ISO-8601 duration, PT1S to P366D, instead of cron", example = "PT30S") String every,
            @Schema(description = "The IANA zone a cron expression reads the wall clock of; UTC if absent", example = "Europe/Berlin")
            String timeZone,
            @Schema(description = "A job body as POST /api/v1/jobs takes it (without notBefore)",
                    requiredMode = Schema.RequiredMode.REQUIRED) Map<String, Object> job,
            @Schema(description = "While the last job runs: skip the tick (default), allow a second run, or cancel-previous",
                    allowableValues = {"skip", "allow", "cancel-previous"}) String overlap,
            @Schema(description = "Ticks missed while no node ran: skip (default) or run-once (one job for them)",
                    allowableValues = {"skip", "run-once"}) String misfire) {}

    /** Every schedule. */
    @Schema(name = "ScheduleList")
    record Listing(List<ScheduleView> items) {}

    static final List<String> NEXT = List.of("next");

    private final ScheduleService schedules;

    ScheduleController(ScheduleService schedules) {
        this.schedules = schedules;
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "createSchedule", summary = "Make a schedule; 201 with Location. Its first tick is the first after now")
    @ApiResponse(responseCode = "201", description = "Made", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "A schedule of that name exists (schedule-exists)")
    @ApiResponse(responseCode = "429", description = "1000 schedules exist, the most there may be (overloaded)")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true, content = @Content(
            mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = Definition.class)))
    Mono<ResponseEntity<ScheduleView>> create(@RequestBody JsonNode body) {
        return blocking(() -> {
            ScheduleView v = schedules.create(body);
            return ResponseEntity.status(HttpStatus.CREATED).location(URI.create("/api/v1/schedules/" + v.name())).body(v);
        });
    }

    @GetMapping
    @Operation(operationId = "listSchedules", summary = "Every schedule, by name")
    @ApiResponse(responseCode = "200", description = "Every schedule", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "next out of range, or a parameter this operation does not read (invalid-request)")
    Mono<Listing> list(@Parameter(description = "list each schedule's next n ticks in nextFireTimes") @RequestParam(required = false)
            @Min(1) @Max(ScheduleService.MAX_NEXT) Integer next, @Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, NEXT);
        return blocking(() -> new Listing(schedules.list(next == null ? 0 : next)));
    }

    @GetMapping("/{name}")
    @Operation(operationId = "getSchedule", summary = "A schedule: its definition, next and last fire, last job and its state")
    @ApiResponse(responseCode = "200", description = "The schedule", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "next out of range, or a parameter this operation does not read (invalid-request)")
    Mono<ScheduleView> get(@PathVariable String name, @Parameter(description = "list the next n ticks in nextFireTimes")
            @RequestParam(required = false) @Min(1) @Max(ScheduleService.MAX_NEXT) Integer next,
            @Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, NEXT);
        return blocking(() -> schedules.get(name, next == null ? 0 : next));
    }

    @PutMapping(path = "/{name}", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "replaceSchedule", summary = "Redefine a schedule; its ticks count from now, its history stays")
    @ApiResponse(responseCode = "200", description = "The schedule as redefined", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Changing under the request (schedule-busy); try again")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true, content = @Content(
            mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = Definition.class)))
    Mono<ScheduleView> replace(@PathVariable String name, @RequestBody JsonNode body) {
        return blocking(() -> schedules.replace(name, body));
    }

    @DeleteMapping("/{name}")
    @Operation(operationId = "deleteSchedule", summary = "Delete a schedule; the jobs it made stay")
    @ApiResponse(responseCode = "200", description = "The schedule as it was", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Changing under the request (schedule-busy); try again")
    Mono<ScheduleView> delete(@PathVariable String name) {
        return blocking(() -> schedules.delete(name));
    }

    @PostMapping("/{name}/pause")
    @Operation(operationId = "pauseSchedule", summary = "Pause: no tick fires until resumed")
    @ApiResponse(responseCode = "200", description = "The schedule, paused", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Changing under the request (schedule-busy); try again")
    Mono<ScheduleView> pause(@PathVariable String name) {
        return blocking(() -> schedules.pause(name));
    }

    @PostMapping("/{name}/resume")
    @Operation(operationId = "resumeSchedule", summary = "Resume: the ticks of the pause are passed over (not misfires)")
    @ApiResponse(responseCode = "200", description = "The schedule, resumed", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Changing under the request (schedule-busy); try again")
    Mono<ScheduleView> resume(@PathVariable String name) {
        return blocking(() -> schedules.resume(name));
    }

    @PostMapping("/{name}/trigger")
    @Operation(operationId = "triggerSchedule", summary = "Run the schedule's job once now, outside its ticks; 202 with the job")
    @ApiResponse(responseCode = "202", description = "The job, its URL in Location", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "The job is no longer valid (a shared channel it uses is gone; invalid-request)")
    @ApiResponse(responseCode = "429", description = "The queue or the memory budget is full (overloaded, memory-budget)")
    Mono<ResponseEntity<JobView>> trigger(@PathVariable String name) {
        return blocking(() -> {
            JobView j = schedules.trigger(name);
            return ResponseEntity.status(HttpStatus.ACCEPTED).location(URI.create("/api/v1/jobs/" + j.id())).body(j);
        });
    }
}
