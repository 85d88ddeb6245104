package io.gosched.api.job;

import io.gosched.service.job.JobView;

import io.gosched.service.job.spi.JobState;


import io.gosched.service.job.JobService;

import java.net.URI;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.gosched.api.error.QueryParameters;
import io.swagger.v3.oas.annotations.Parameter;

import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebExchange;

/**
 * Jobs over HTTP. The body of POST is read as a JSON tree and validated by hand (JobSpecParser)
 * so that every violation, however deep in the workload, is named by its JSON pointer.
 */
@RestController
@RequestMapping("/api/v1/jobs")
@Tag(name = "Jobs", description = "Workloads run as goroutines")
class JobController {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    static final String HANDLER = "The name of one of the application's job handlers (GET /api/v1/handlers): the job runs it with args";
    static final String HANDLER_ARGS = "The handler's arguments, as the argsSchema of GET /api/v1/handlers describes them; checked at "
            + "submission (422 naming /args/<field>)";

    /**
     * The body of a submission as the OpenAPI document describes it; read by {@link JobSpecParser}
     * from the JSON tree, which names every violation by its pointer.
     */
    @Schema(name = "JobSubmission", description = "A job: exactly one of workload (the DSL, see GET /api/v1/workloads), "
            + "template (a template's name, with params), http (a call to a target under gosched.jobs.http.allowed-targets) or "
            + "handler (one of the application's job handlers, with args)")
    record Submission(
            @Schema(description = "A workload in the DSL: {\"steps\": [...], \"channels\": [...]?}") Map<String, Object> workload,
            HttpTarget http,
            @Schema(description = HANDLER) String handler,
            @Schema(description = HANDLER_ARGS) Object args,
            @Schema(description = "A template's name (GET /api/v1/workloads)", example = "fan-out-fan-in") String template,
            @Schema(description = "The template's parameters") Map<String, Object> params,
            @Schema(description = "The job's deadline per attempt", minimum = "1") Long timeoutMs,
            @Schema(description = "0 (lowest) to 9", minimum = "0", maximum = "9") Integer priority,
            @Schema(description = "Not started before this instant (RFC 3339)") Instant notBefore,
            @Schema(description = "A label for people, at most 200 characters", maxLength = 200) String name,
            Retry retry,
            @ArraySchema(maxItems = 100, uniqueItems = true, arraySchema = @Schema(description = "Ids of jobs this one waits for: it is "
                    + "'waiting' (no place in the queue) until every one of them has succeeded, then queued; when one ends otherwise "
                    + "(failed, cancelled, timed_out, or gone) it ends cancelled with an error of reason 'dependency' naming that job "
                    + "and its state. Unknown ids are refused (422, each by pointer). In a batch an element may name another "
                    + "entry's key"), schema = @Schema(example = "3f1c9a52-7d4e-4b8a-9f0e-2a6d1c5b7e90")) List<String> after) {}

    /** An HTTP-target job's call, as the document describes it; read by HttpCallParser. */
    @Schema(name = "HttpTarget", description = "A call the job makes on each attempt, with Idempotency-Key: <job id> and "
            + "Gosched-Attempt: <n>. 2xx succeeds (the answer is the result); 5xx, 429, connect errors and timeouts fail and are "
            + "retried under the job's retry policy (429 and 503 no earlier than their Retry-After); other 4xx fail without a retry. "
            + "Refused (422) unless the url lies under a prefix of gosched.jobs.http.allowed-targets; redirects are followed only "
            + "within them")
    record HttpTarget(
            @Schema(allowableValues = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, defaultValue = "POST") String method,
            @Schema(requiredMode = Schema.RequiredMode.REQUIRED, format = "uri", example = "https://api.example.com/hooks/resize")
            String url,
            @Schema(description = "Headers to send (not Host, Content-Length, Connection and the like, nor the two the service sets)")
            Map<String, String> headers,
            @Schema(description = "Any JSON value, sent as application/json; a JSON string is sent as text/plain") Object body,
            @Schema(description = "How long one attempt's call may take; default 30000, at most the job's timeoutMs", minimum = "1")
            Long timeoutMs) {}

    /** One entry of a batch: a job body and an optional key the others' {@code after} may name. */
    @Schema(name = "JobBatchEntry", description = "A job body as POST /api/v1/jobs takes it, with an optional key")
    record BatchEntry(
            @Schema(description = "A name for this entry, unique in the batch, that another entry's 'after' may use instead of an "
                    + "id (a key wins over a job id of the same spelling)", maxLength = 64, example = "a") String key,
            Map<String, Object> workload, HttpTarget http, @Schema(description = HANDLER) String handler,
            @Schema(description = HANDLER_ARGS) Object args, String template, Map<String, Object> params, Long timeoutMs,
            Integer priority, Instant notBefore, String name, Retry retry,
            @ArraySchema(maxItems = 100, uniqueItems = true, arraySchema = @Schema(description = "Keys of other entries or ids of "
                    + "existing jobs")) List<String> after) {}

    /** The body of POST .../batch. */
    @Schema(name = "JobBatch", description = "Jobs admitted all together or not at all")
    record Batch(@ArraySchema(minItems = 1, maxItems = 1000, schema = @Schema(implementation = BatchEntry.class),
            arraySchema = @Schema(requiredMode = Schema.RequiredMode.REQUIRED)) List<BatchEntry> jobs) {}

    /** The answer of POST .../batch. */
    @Schema(name = "JobBatchAccepted")
    record BatchAccepted(@ArraySchema(arraySchema = @Schema(description = "The jobs' ids, in the order of the entries")) List<String> ids) {}

    /** A submission's retry policy. */
    @Schema(name = "RetryPolicy", description = "Automatic retries of a failed or timed-out attempt")
    record Retry(@Schema(requiredMode = Schema.RequiredMode.REQUIRED, minimum = "1") int maxAttempts,
            @Schema(minimum = "0") Long backoffMs, @Schema(minimum = "1", maximum = "10") Double multiplier) {}

    /** The answer of GET .../result: result and error as in the job's view, absent when there is none. */
    @Schema(name = "JobResultView")
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    record ResultView(String id, JobState state, JobView.Result result, JobView.Error error) {}

    private final JobService jobs;

    JobController(JobService jobs) {
        this.jobs = jobs;
    }

    @PostMapping(consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "submitJob", summary = "Submit a job (a workload, or a template with params); 202 with Location")
    @ApiResponse(responseCode = "202", description = "Accepted: the job, its URL in Location (Idempotent-Replayed: true when "
            + "an earlier submission with the same Idempotency-Key and body is answered again)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "The Idempotency-Key was used with another body (idempotency-conflict)")
    @ApiResponse(responseCode = "429", description = "The queue is full (overloaded), or the memory budget "
            + "(gosched.api.limits.max-retained-bytes) has no room for the job (memory-budget); Retry-After says when to try again")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true, content = @Content(
            mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = Submission.class)))
    ResponseEntity<JobView> submit(@RequestBody JsonNode body,
            @RequestHeader(name = IDEMPOTENCY_KEY, required = false) String idempotencyKey) {
        JobService.Submitted s = jobs.submit(body, idempotencyKey);
        ResponseEntity.BodyBuilder b = ResponseEntity.status(HttpStatus.ACCEPTED).location(URI.create("/api/v1/jobs/" + s.job().id()));
        if (s.replayed()) {
            b.header("Idempotent-Replayed", "true");
        }
        return b.body(s.job());
    }

    @PostMapping(path = "/batch", consumes = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "submitJobBatch", summary = "Submit up to 1,000 jobs at once, all or none; 'after' may name another "
            + "entry's key. 202 with the ids in order")
    @ApiResponse(responseCode = "202", description = "Accepted, all of them: their ids in the order of the entries (GET "
            + "/api/v1/jobs/{id} for each view)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "None accepted: each bad entry named by its pointer (e.g. /jobs/3/after/0 for "
            + "an unknown id or key, or an 'after' that closes a cycle; /jobs/1/key for a duplicate key)")
    @ApiResponse(responseCode = "429", description = "None accepted: the queue cannot take all of them (overloaded); Retry-After says "
            + "when to try again")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(required = true, content = @Content(
            mediaType = MediaType.APPLICATION_JSON_VALUE, schema = @Schema(implementation = Batch.class)))
    ResponseEntity<BatchAccepted> submitBatch(@RequestBody JsonNode body) {
        return ResponseEntity.status(HttpStatus.ACCEPTED).body(new BatchAccepted(jobs.submitBatch(body)));
    }

    static final List<String> LIST_PARAMETERS = List.of("state", "template", "name", "submittedAfter", "submittedBefore", "page", "size");

    @GetMapping
    @Operation(operationId = "listJobs", summary = "List jobs, newest first; filter by state, template, name and submission time")
    @ApiResponse(responseCode = "200", description = "A page of the jobs that match every filter given; total counts them all",
            useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "state, page or size out of range, or a parameter this operation does not "
            + "read (invalid-request: parameter and allowed name it)")
    JobService.Page list(
            @Parameter(description = "only jobs in this state") @RequestParam(required = false) JobState state,
            @Parameter(description = "only jobs made from this template (GET /api/v1/workloads)") @RequestParam(required = false)
            String template,
            @Parameter(description = "only jobs submitted with this name") @RequestParam(required = false) String name,
            @Parameter(description = "only jobs submitted at or after this instant (RFC 3339, e.g. 2026-01-02T03:04:05Z)")
            @RequestParam(required = false) Instant submittedAfter,
            @Parameter(description = "only jobs submitted before this instant (RFC 3339)") @RequestParam(required = false)
            Instant submittedBefore,
            @Parameter(description = "the page, from 0") @RequestParam(defaultValue = "0") @Min(0) @Max(1_000_000) int page,
            @Parameter(description = "jobs per page") @RequestParam(defaultValue = "50") @Min(1) @Max(500) int size,
            @Parameter(hidden = true) ServerWebExchange exchange) {
        QueryParameters.only(exchange, LIST_PARAMETERS);
        return jobs.list(new JobService.Filter(state, template, name, submittedAfter, submittedBefore), page, size);
    }

    @GetMapping("/{id}")
    @Operation(operationId = "getJob", summary = "A job's state, timings, counters, result or error")
    JobView get(@PathVariable String id) {
        return jobs.get(id);
    }

    @GetMapping("/{id}/result")
    @Operation(operationId = "getJobResult", summary = "200 with the result once the job is final; 202 while it is queued or running")
    @ApiResponse(responseCode = "200", description = "The job is final: its result or error", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "202", description = "Still queued or running; Retry-After says when to ask again",
            useReturnTypeSchema = true)
    ResponseEntity<ResultView> result(@PathVariable String id) {
        JobView v = jobs.get(id);
        ResultView r = new ResultView(v.id(), v.state(), v.result(), v.error());
        if (!v.state().isFinal()) {
            return ResponseEntity.status(HttpStatus.ACCEPTED).header("Retry-After", "1").body(r);
        }
        return ResponseEntity.ok(r);
    }

    @DeleteMapping("/{id}")
    @Operation(operationId = "cancelJob", summary = "Cancel: 200 if cancelled at once (it was queued), 202 if its goroutines are being stopped")
    @ApiResponse(responseCode = "200", description = "Cancelled (it was queued)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "202", description = "Cancelling: its context is cancelled, its goroutines are ending",
            useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Already final (job-finished), or changing state (job-busy)")
    ResponseEntity<JobView> cancel(@PathVariable String id) {
        JobService.Cancelled c = jobs.cancel(id);
        return ResponseEntity.status(c.done() ? HttpStatus.OK : HttpStatus.ACCEPTED).body(c.job());
    }

    @PostMapping("/{id}/retry")
    @Operation(operationId = "retryJob", summary = "Run a failed, cancelled or timed-out job again")
    @ApiResponse(responseCode = "202", description = "Queued again with a fresh attempt budget", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Not failed, cancelled or timed out (job-not-retryable), or changing state (job-busy)")
    @ApiResponse(responseCode = "422", description = "A shared channel the workload uses no longer exists (invalid-request)")
    @ApiResponse(responseCode = "429", description = "The queue is full (overloaded), or the memory budget "
            + "(gosched.api.limits.max-retained-bytes) has no room for the job (memory-budget); Retry-After says when to try again")
    ResponseEntity<JobView> retry(@PathVariable String id) {
        return ResponseEntity.status(HttpStatus.ACCEPTED).location(URI.create("/api/v1/jobs/" + id)).body(jobs.retry(id));
    }

    @GetMapping(path = "/{id}/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    @Operation(operationId = "streamJobEvents", summary = "Server-sent events: 'state' on every state change, 'progress' as counters move; ends when final")
    @ApiResponse(responseCode = "200", description = "The event stream", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "429", description = "gosched.api.admission.max-open-streams SSE streams are open (too-many-open); "
            + "Retry-After says when to try again")
    Flux<ServerSentEvent<JobView>> events(@PathVariable String id) {
        return jobs.events(id).map(e -> ServerSentEvent.builder(e.job()).id(Long.toString(e.seq())).event(e.kind().json()).build());
    }
}
