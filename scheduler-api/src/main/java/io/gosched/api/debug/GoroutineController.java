package io.gosched.api.debug;

import io.gosched.api.error.QueryParameters;
import io.gosched.service.job.JobService;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

/**
 * Goroutine dumps over HTTP, Go's {@code /debug/pprof/goroutine}: JSON, or with
 * {@code format=text} the traceback text of {@code debug=2}. A dump stops nothing (see
 * GoRuntime.goroutines); its size is bounded by {@code limit}, so a runtime with a million
 * goroutines cannot make one answer fill the heap.
 */
@RestController
@Tag(name = "Debug", description = "Goroutine dumps and leaks")
class GoroutineController {

    /** The most goroutines one answer carries; the rest are counted in total. */
    static final int MAX_LIMIT = 10_000;

    /** What {@code format} accepts: JSON, or Go's traceback text. */
    enum Format { JSON, TEXT }

    /** A frame as Go prints one: function, file and line. */
    record Frame(String function, String file, int line) {
        static Frame of(StackTraceElement f) {
            return f == null ? null : new Frame(f.getClassName() + "." + f.getMethodName(), f.getFileName(), f.getLineNumber());
        }
    }

    /** One goroutine; waitingForMs is 0 unless waiting. */
    record Goroutine(long id, String state, String waitReason, long waitingForMs, Map<String, String> labels,
            long parentId, Frame createdBy, List<Frame> stack) {
        static Goroutine of(GoroutineInfo g) {
            return new Goroutine(g.id(), g.state(), g.waitReason(), g.waitingFor().toMillis(), g.labels(), g.parentId(),
                    Frame.of(g.createdAt()), g.stack().stream().map(Frame::of).toList());
        }
    }

    /** A dump: total goroutines that matched, those shown (at most limit), leaks found so far in the runtime. */
    record Dump(int total, boolean truncated, long leakedTotal, List<Goroutine> goroutines) {}

    /** A job's goroutines on this node, and those of its goroutines found leaked. */
    record JobGoroutines(String job, int total, boolean truncated, List<Goroutine> goroutines, List<Goroutine> leaked) {}

    private final GoRuntime runtime;
    private final JobService jobs;

    GoroutineController(GoRuntime runtime, JobService jobs) {
        this.runtime = runtime;
        this.jobs = jobs;
    }

    @GetMapping(path = "/api/v1/debug/goroutines", produces = {MediaType.APPLICATION_JSON_VALUE, MediaType.TEXT_PLAIN_VALUE})
    @Operation(operationId = "listGoroutines", summary = "Every live goroutine: state, wait reason, waiting for, labels, stack, creator (Go: /debug/pprof/goroutine); "
            + "format=text answers Go's traceback text (debug=2)")
    @ApiResponse(responseCode = "200", description = "The dump", content = {
        @Content(mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = Dump.class)),
        @Content(mediaType = MediaType.TEXT_PLAIN_VALUE, schema = @Schema(type = "string"))})
    @ApiResponse(responseCode = "422", description = "format, state, label or limit out of range, or a parameter this "
            + "operation does not read (invalid-request)")
    ResponseEntity<?> goroutines(
            @Parameter(description = "json (default) or text",
                    schema = @Schema(type = "string", allowableValues = {"json", "text"})) @RequestParam(defaultValue = "json") Format format,
            @Parameter(description = "running, runnable, waiting or syscall",
                    schema = @Schema(type = "string", allowableValues = {"running", "runnable", "waiting", "syscall"})) @RequestParam(required = false) GoroutineInfo.State state,
            @Parameter(description = "key:value; only goroutines with this label") @RequestParam(required = false)
            @Pattern(regexp = "[^:]+:.*", message = "must be key:value") String label,
            @Parameter(description = "a job id: only its goroutines (label job=<id>)") @RequestParam(required = false) String job,
            @Parameter(description = "at most this many goroutines (1 to 10000)") @RequestParam(defaultValue = "1000")
            @Min(1) @Max(MAX_LIMIT) int limit,
            @Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, List.of("format", "state", "label", "job", "limit"));
        boolean text = format == Format.TEXT;
        Predicate<GoroutineInfo> filter = filter(state, label, job);
        List<GoroutineInfo> all = runtime.goroutines().stream().filter(filter).toList();
        List<GoroutineInfo> shown = all.size() > limit ? all.subList(0, limit) : all;
        if (text) {
            return ResponseEntity.ok().contentType(MediaType.TEXT_PLAIN).body(GoRuntime.traceback(shown));
        }
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON)
                .body(new Dump(all.size(), shown.size() < all.size(), runtime.leakedGoroutinesTotal(),
                        shown.stream().map(Goroutine::of).toList()));
    }

    @GetMapping(path = "/api/v1/debug/goroutines/leaked", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "listLeakedGoroutines", summary = "Goroutines found leaked: blocked forever on a channel, select or sync object nobody can reach "
            + "(Go 1.26 goroutineleak); oldest first, the newest 10000 kept")
    @ApiResponse(responseCode = "200", description = "The leak reports (stacks are empty: the goroutines are gone)",
            useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "A query parameter: this operation takes none (invalid-request)")
    Dump leaked(@Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, List.of());
        List<Goroutine> l = runtime.leakedGoroutines().stream().map(Goroutine::of).toList();
        return new Dump(l.size(), false, runtime.leakedGoroutinesTotal(), l);
    }

    @GetMapping(path = "/api/v1/jobs/{id}/goroutines", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "listJobGoroutines", summary = "The job's live goroutines on this node (label job=<id>) and those found leaked")
    @ApiResponse(responseCode = "200", description = "The job's goroutines", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "limit out of range, or a parameter other than limit (invalid-request)")
    JobGoroutines jobGoroutines(@PathVariable String id,
            @Parameter(description = "at most this many goroutines (1 to 10000)") @RequestParam(defaultValue = "1000")
            @Min(1) @Max(MAX_LIMIT) int limit,
            @Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, List.of("limit"));
        jobs.get(id); // 404 for an unknown job
        Predicate<GoroutineInfo> mine = g -> id.equals(g.labels().get("job"));
        List<GoroutineInfo> all = runtime.goroutines().stream().filter(mine).toList();
        List<GoroutineInfo> shown = all.size() > limit ? all.subList(0, limit) : all;
        List<Goroutine> leaked = runtime.leakedGoroutines().stream().filter(mine).map(Goroutine::of).toList();
        return new JobGoroutines(id, all.size(), shown.size() < all.size(), shown.stream().map(Goroutine::of).toList(), leaked);
    }

    private static Predicate<GoroutineInfo> filter(GoroutineInfo.State state, String label, String job) {
        Predicate<GoroutineInfo> p = g -> true;
        if (state != null) { // WireEnums reads the parameter: its wire name is the state's goName
            p = p.and(g -> g.is(state));
        }
        if (label != null) {
            int colon = label.indexOf(':');
            String k = label.substring(0, colon);
            String v = label.substring(colon + 1);
            p = p.and(g -> v.equals(g.labels().get(k)));
        }
        if (job != null) {
            p = p.and(g -> job.equals(g.labels().get("job")));
        }
        return p;
    }
}
