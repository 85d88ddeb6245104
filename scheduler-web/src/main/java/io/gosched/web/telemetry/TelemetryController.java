package io.gosched.web.telemetry;

import io.gosched.web.BadParameterProblem;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/** {@code GET /api/v1/telemetry/stream}: scheduler snapshots as server-sent events. */
@RestController
@Tag(name = "telemetry", description = "The scheduler's state as a stream, for the live page and dashboards")
class TelemetryController {

    static final URI BAD_INTERVAL = URI.create("https://gosched.io/problems/telemetry-interval");

    private final TelemetryStream stream;

    TelemetryController(TelemetryStream stream) {
        this.stream = stream;
    }

    /**
     * One {@code snapshot} event at once and then one per {@code intervalMs} (default 1000), bounded
     * by {@code gosched.telemetry.stream.min-interval}/{@code max-interval}; a bad value is a 400
     * problem detail naming the parameter. Each event's data is a {@link TelemetrySnapshot} as JSON,
     * written once for all subscribers; beyond {@code max-open-streams} the answer is 429.
     */
    @GetMapping(path = "/api/v1/telemetry/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @Operation(summary = "Server-sent events: a snapshot of Ps, queues and Ms at once, then one every intervalMs")
    @ApiResponse(responseCode = "200", description = "The snapshot stream", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "429", description = "gosched.api.admission.max-open-streams SSE streams are open (too-many-open); "
            + "Retry-After says when to try again")
    Flux<ServerSentEvent<String>> stream(@RequestParam(required = false) String intervalMs) {
        return stream.events(interval(intervalMs));
    }

    private Duration interval(String raw) {
        TelemetryProperties.Stream p = stream.properties();
        if (raw == null) {
            return p.defaultInterval();
        }
        long ms;
        try {
            ms = Long.parseLong(raw.strip());
        } catch (NumberFormatException e) {
            throw new BadInterval(raw, p);
        }
        if (ms < p.minInterval().toMillis() || ms > p.maxInterval().toMillis()) {
            throw new BadInterval(raw, p);
        }
        return Duration.ofMillis(ms);
    }

    /** Rendered here rather than by a global advice so the problem is the same whatever else is on the classpath. */
    @ExceptionHandler(BadInterval.class)
    ResponseEntity<ProblemDetail> badInterval(BadInterval e) {
        return BadParameterProblem.of(BAD_INTERVAL, "Invalid telemetry interval", e.getMessage(), "intervalMs",
                Map.of("min", e.min, "max", e.max));
    }

    static final class BadInterval extends RuntimeException {
        final long min;
        final long max;

        BadInterval(String raw, TelemetryProperties.Stream p) {
            super("intervalMs must be an integer from " + p.minInterval().toMillis() + " to "
                    + p.maxInterval().toMillis() + ", was '" + raw + "'");
            this.min = p.minInterval().toMillis();
            this.max = p.maxInterval().toMillis();
        }
    }
}
