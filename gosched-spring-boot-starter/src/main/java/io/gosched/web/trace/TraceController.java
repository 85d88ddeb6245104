package io.gosched.web.trace;

import io.gosched.runtime.Trace;
import io.gosched.api.error.ApiProblem;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code GET /api/v1/trace?seconds=N[&timestamps=interpolated|exact]}: records the scheduler for N
 * seconds and returns a Chrome trace-event JSON file (open it in Perfetto or chrome://tracing).
 */
@RestController
@Tag(name = "Trace", description = "Execution traces of the scheduler, for Perfetto")
class TraceController {

    static final URI BUSY = ApiProblem.type("trace-busy");
    static final int MIN_SECONDS = 1;
    static final int MAX_SECONDS = 30;
    static final int DEFAULT_SECONDS = 5;

    private final TraceRecorder recorder;

    TraceController(TraceRecorder recorder) {
        this.recorder = recorder;
    }

    /**
     * Records for {@code seconds} (1 to 30, default 5) and answers with the trace as an attachment.
     * {@code timestamps}: {@code interpolated} (default: the clock is read once per goroutine
     * switch, creations, unparks and steals are placed between) or {@code exact} (every event reads
     * the clock; costs more). A bad {@code seconds} or {@code timestamps} is a problem detail naming
     * it (422 out of range or not a mode, 400 not a number); a recording already running is a 409.
     */
    @GetMapping(path = "/api/v1/trace", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "recordTrace", summary = "Record the scheduler for N seconds (1 to 30, default 5); a Chrome trace-event file for Perfetto")
    @ApiResponse(responseCode = "200", description = "The trace, as an attachment gosched-trace.json", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "A recording is already running (trace-busy)")
    @ApiResponse(responseCode = "422", description = "seconds or timestamps out of range (invalid-request)")
    Mono<ResponseEntity<Map<String, Object>>> trace(
            @RequestParam(defaultValue = "" + DEFAULT_SECONDS) @Min(MIN_SECONDS) @Max(MAX_SECONDS) int seconds,
            @Parameter(description = "interpolated (default) or exact",
                    schema = @Schema(type = "string", allowableValues = {"interpolated", "exact"}))
            @RequestParam(defaultValue = "interpolated") Trace.Timestamps timestamps) {
        return recorder.record(Duration.ofSeconds(seconds), timestamps).onErrorMap(TraceRecorder.Busy.class,
                e -> ApiProblem.conflict("trace-busy", "Trace already recording", e.getMessage())).map(trace -> ResponseEntity.ok()
                .contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.CONTENT_DISPOSITION,
                        ContentDisposition.attachment().filename("gosched-trace.json").build().toString())
                .body(trace));
    }
}
