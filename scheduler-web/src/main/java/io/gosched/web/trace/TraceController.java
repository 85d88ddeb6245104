package io.gosched.web.trace;

import io.gosched.runtime.Trace;
import io.gosched.web.BadParameterProblem;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * {@code GET /api/v1/trace?seconds=N[&timestamps=interpolated|exact]}: records the scheduler for N
 * seconds and returns a Chrome trace-event JSON file (open it in Perfetto or chrome://tracing).
 */
@RestController
@Tag(name = "trace", description = "Execution traces of the scheduler, for Perfetto")
class TraceController {

    static final URI BAD_SECONDS = URI.create("https://gosched.io/problems/trace-seconds");
    static final URI BAD_TIMESTAMPS = URI.create("https://gosched.io/problems/trace-timestamps");
    static final URI BUSY = URI.create("https://gosched.io/problems/trace-busy");
    static final int MIN_SECONDS = 1;
    static final int MAX_SECONDS = 30;
    static final int DEFAULT_SECONDS = 5;
    /** The values {@code timestamps} accepts, in the enum's order: interpolated, exact. */
    static final List<String> TIMESTAMPS = Stream.of(Trace.Timestamps.values()).map(ChromeTrace::timestampsName).toList();

    private final TraceRecorder recorder;

    TraceController(TraceRecorder recorder) {
        this.recorder = recorder;
    }

    /**
     * Records for {@code seconds} (1 to 30, default 5) and answers with the trace as an attachment.
     * {@code timestamps}: {@code interpolated} (default: the clock is read once per goroutine
     * switch, creations, unparks and steals are placed between) or {@code exact} (every event reads
     * the clock; costs more). A bad {@code seconds} or {@code timestamps} is a 400 problem detail
     * naming it; a recording already running is a 409.
     */
    @GetMapping(path = "/api/v1/trace", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(summary = "Record the scheduler for N seconds (1 to 30, default 5); a Chrome trace-event file for Perfetto")
    @ApiResponse(responseCode = "200", description = "The trace, as an attachment gosched-trace.json", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "A recording is already running")
    Mono<ResponseEntity<Map<String, Object>>> trace(@RequestParam(required = false) String seconds,
            @RequestParam(required = false) String timestamps) {
        Duration duration = Duration.ofSeconds(seconds(seconds));
        Trace.Timestamps timing = timestamps(timestamps);
        return recorder.record(duration, timing).map(trace -> ResponseEntity.ok()
                .contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.CONTENT_DISPOSITION,
                        ContentDisposition.attachment().filename("gosched-trace.json").build().toString())
                .body(trace));
    }

    private static int seconds(String raw) {
        if (raw == null) {
            return DEFAULT_SECONDS;
        }
        int s;
        try {
            s = Integer.parseInt(raw.strip());
        } catch (NumberFormatException e) {
            throw new BadSeconds(raw);
        }
        if (s < MIN_SECONDS || s > MAX_SECONDS) {
            throw new BadSeconds(raw);
        }
        return s;
    }

    private static Trace.Timestamps timestamps(String raw) {
        if (raw == null) {
            return Trace.Timestamps.INTERPOLATED;
        }
        int i = TIMESTAMPS.indexOf(raw.strip().toLowerCase(Locale.ROOT));
        if (i < 0) {
            throw new BadTimestamps(raw);
        }
        return Trace.Timestamps.values()[i];
    }

    /** Rendered here rather than by a global advice so the problem is the same whatever else is on the classpath. */
    @ExceptionHandler(BadSeconds.class)
    ResponseEntity<ProblemDetail> badSeconds(BadSeconds e) {
        return BadParameterProblem.of(BAD_SECONDS, "Invalid trace duration", e.getMessage(), "seconds",
                Map.of("min", MIN_SECONDS, "max", MAX_SECONDS));
    }

    @ExceptionHandler(BadTimestamps.class)
    ResponseEntity<ProblemDetail> badTimestamps(BadTimestamps e) {
        return BadParameterProblem.of(BAD_TIMESTAMPS, "Invalid trace timestamps", e.getMessage(), "timestamps",
                Map.of("allowed", TIMESTAMPS));
    }

    @ExceptionHandler(TraceRecorder.Busy.class)
    ResponseEntity<ProblemDetail> busy(TraceRecorder.Busy e) {
        ProblemDetail pd = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, e.getMessage());
        pd.setType(BUSY);
        pd.setTitle("Trace already recording");
        return ResponseEntity.status(HttpStatus.CONFLICT).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(pd);
    }

    static final class BadTimestamps extends RuntimeException {
        BadTimestamps(String raw) {
            super("timestamps must be one of " + TIMESTAMPS + ", was '" + raw + "'");
        }
    }

    static final class BadSeconds extends RuntimeException {
        BadSeconds(String raw) {
            super("seconds must be an integer from " + MIN_SECONDS + " to " + MAX_SECONDS + ", was '" + raw + "'");
        }
    }
}
