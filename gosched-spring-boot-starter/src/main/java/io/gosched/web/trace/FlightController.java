package io.gosched.web.trace;

import io.gosched.api.error.ApiProblem;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The flight recorder ({@link FlightRecorderService}): {@code GET /api/v1/trace/flight} is the
 * last window now, as a Chrome trace-event file for Perfetto; {@code /api/v1/trace/flight/snapshots}
 * lists the snapshots kept automatically (a job failed, the scheduling latency passed its bound),
 * and {@code /api/v1/trace/flight/snapshots/{id}} serves one. Like every trace, scheduler:admin.
 */
@RestController
@Tag(name = "Trace")
class FlightController {

    static final URI OFF = ApiProblem.type("flight-recorder-off");
    static final URI NO_SNAPSHOT = ApiProblem.type("flight-snapshot-not-found");

    private final FlightRecorderService flight;

    FlightController(FlightRecorderService flight) {
        this.flight = flight;
    }

    @GetMapping(path = "/api/v1/trace/flight", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "getFlightTrace", summary = "The flight recorder's last window (gosched.trace.flight.window) now: a Chrome trace-event file for Perfetto")
    @ApiResponse(responseCode = "200", description = "The trace, as an attachment gosched-flight.json; otherData.complete is "
            + "false when a P's event budget did not hold the whole window", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "404", description = "The flight recorder is off (gosched.trace.flight.enabled=false)")
    Mono<ResponseEntity<Map<String, Object>>> flight() {
        return Mono.fromCallable(() -> {
            var s = flight.snapshot().orElseThrow(FlightController::off);
            return attachment(FlightRecorderService.perfetto(s, flight.properties().window(), null), "gosched-flight.json");
        }).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping(path = "/api/v1/trace/flight/snapshots", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "listFlightSnapshots", summary = "The flight recorder's snapshots kept automatically, newest first")
    @ApiResponse(responseCode = "200", description = "snapshots (id, reason, detail, takenAt, events, complete, href of each) "
            + "and suppressed (how many were not kept)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "404", description = "The flight recorder is off (gosched.trace.flight.enabled=false)")
    @ApiResponse(responseCode = "422", description = "A query parameter: this operation takes none (invalid-request)")
    Map<String, Object> snapshots(@io.swagger.v3.oas.annotations.Parameter(hidden = true)
            org.springframework.web.server.ServerWebExchange exchange) {
        io.gosched.api.error.QueryParameters.only(exchange, List.of());
        if (!flight.enabled()) {
            throw off();
        }
        List<Map<String, Object>> list = flight.kept().stream().map(k -> Map.<String, Object>of(
                "id", k.id(), "reason", k.reason(), "detail", k.detail(), "takenAt", k.takenAt().toString(),
                "events", k.snapshot().events().size(), "complete", k.snapshot().complete(),
                "href", "/api/v1/trace/flight/snapshots/" + k.id())).toList();
        return Map.of("snapshots", list, "suppressed", flight.suppressed());
    }

    @GetMapping(path = "/api/v1/trace/flight/snapshots/{id}", produces = MediaType.APPLICATION_JSON_VALUE)
    @Operation(operationId = "getFlightSnapshot", summary = "One kept flight-recorder snapshot: a Chrome trace-event file for Perfetto")
    @ApiResponse(responseCode = "200", description = "The trace, as an attachment gosched-flight-<id>.json; otherData names "
            + "the reason it was kept", useReturnTypeSchema = true)
    Mono<ResponseEntity<Map<String, Object>>> snapshot(@PathVariable String id) {
        return Mono.fromCallable(() -> {
            if (!flight.enabled()) {
                throw off();
            }
            long n;
            try {
                n = Long.parseLong(id.strip());
            } catch (NumberFormatException e) {
                throw noSnapshot(id);
            }
            var k = flight.kept(n).orElseThrow(() -> noSnapshot(id));
            return attachment(FlightRecorderService.perfetto(k.snapshot(), flight.properties().window(), k),
                    "gosched-flight-" + k.id() + ".json");
        }).subscribeOn(Schedulers.boundedElastic());
    }

    private static ResponseEntity<Map<String, Object>> attachment(Map<String, Object> body, String name) {
        return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.CONTENT_DISPOSITION, ContentDisposition.attachment().filename(name).build().toString())
                .body(body);
    }

    private static ApiProblem off() {
        return ApiProblem.notFound("flight-recorder-off", "Flight recorder off",
                "the flight recorder is off: set gosched.trace.flight.enabled=true");
    }

    private static ApiProblem noSnapshot(String id) {
        return ApiProblem.notFound("flight-snapshot-not-found", "No such flight-recorder snapshot",
                "no kept flight-recorder snapshot '" + id + "' (kept ones: GET /api/v1/trace/flight/snapshots)")
                .with("snapshot", id);
    }
}
