package io.gosched.web.telemetry;

import io.gosched.api.error.ApiProblem;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.time.Duration;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/** {@code GET /api/v1/telemetry/stream}: scheduler snapshots as server-sent events. */
@RestController
@Tag(name = "Scheduler")
class TelemetryController {

    private final TelemetryStream stream;

    TelemetryController(TelemetryStream stream) {
        this.stream = stream;
    }

    /**
     * One {@code snapshot} event at once and then one per {@code intervalMs} (default
     * {@code gosched.telemetry.stream.default-interval}), bounded by
     * {@code gosched.telemetry.stream.min-interval}/{@code max-interval}: out of bounds is a 422
     * problem detail naming the parameter and its bounds, not a number a 400. Each event's data is
     * a {@link TelemetrySnapshot} as JSON, written once for all subscribers; beyond
     * {@code max-open-streams} the answer is 429.
     */
    @GetMapping(path = "/api/v1/telemetry/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @Operation(operationId = "streamTelemetry", summary = "Server-sent events: a snapshot of Ps, queues and Ms at once, then one every intervalMs")
    @ApiResponse(responseCode = "200", description = "The snapshot stream", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "intervalMs outside gosched.telemetry.stream.min-interval and "
            + "max-interval (invalid-request)")
    @ApiResponse(responseCode = "429", description = "gosched.api.admission.max-open-streams SSE streams are open (too-many-open); "
            + "Retry-After says when to try again")
    Flux<ServerSentEvent<String>> stream(@RequestParam(required = false) Long intervalMs) {
        return stream.events(interval(intervalMs));
    }

    /** The bounds are configuration, so they are checked here rather than by a constraint annotation. */
    private Duration interval(Long ms) {
        TelemetryProperties.Stream p = stream.properties();
        if (ms == null) {
            return p.defaultInterval();
        }
        long min = p.minInterval().toMillis();
        long max = p.maxInterval().toMillis();
        if (ms < min || ms > max) {
            throw ApiProblem.parameterOutOfRange("intervalMs", ms, min, max);
        }
        return Duration.ofMillis(ms);
    }
}
