package io.gosched.api.channel;

import io.gosched.service.channel.ChannelService;

import java.net.URI;
import java.time.Duration;
import java.util.List;

import io.gosched.api.error.ApiProblem;
import io.gosched.service.channel.ChannelName;
import io.gosched.service.channel.ChannelView;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** Named channels over HTTP. Nothing here blocks: sends and receives are futures turned into Monos. */
@RestController
@RequestMapping("/api/v1/channels")
@Tag(name = "Channels", description = "Named channels shared by jobs and HTTP clients")
class ChannelController {

    /** Body of POST /api/v1/channels. */
    record CreateChannel(
            @NotNull @Pattern(regexp = ChannelName.REGEXP) String name,
            @Min(0) @Max(Integer.MAX_VALUE) @ChannelConstraints.Capacity Integer capacity) {

        int capacityOrZero() {
            return capacity == null ? 0 : capacity;
        }
    }

    /** Body of a send: any JSON value (a JSON null is one: Jackson reads it as a null node, so only an absent value is null here) and how long to wait. */
    record SendRequest(@NotNull(message = "is required (any JSON value, null included)") JsonNode value,
            @ChannelConstraints.Timeout Long timeoutMs) {}

    /** Body of a receive (optional): how long to wait. */
    record RecvRequest(@ChannelConstraints.Timeout Long timeoutMs) {}

    private final ChannelService channels;

    ChannelController(ChannelService channels) {
        this.channels = channels;
    }

    @PostMapping
    @Operation(operationId = "createChannel", summary = "Create a channel: make(chan any, capacity)")
    @ApiResponse(responseCode = "201", description = "Created; its URL in Location", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "A channel of that name exists (channel-exists)")
    @ApiResponse(responseCode = "429", description = "As many channels exist as gosched.api.channels.max-channels allows (overloaded), "
            + "or the memory budget has no room for its slots (memory-budget); Retry-After says when to try again")
    @ApiResponse(responseCode = "503", description = "Cluster mode: NATS cannot be reached (backend-unavailable, with Retry-After); nothing was made")
    Mono<ResponseEntity<ChannelView>> create(@Valid @RequestBody CreateChannel body) {
        return channels.open(body.name(), body.capacityOrZero())
                .map(v -> ResponseEntity.created(URI.create("/api/v1/channels/" + v.name())).body(v));
    }

    @GetMapping
    @Operation(operationId = "listChannels", summary = "List channels with len, cap, closed and waiting senders and receivers; in cluster mode every node's, each with its home node")
    @ApiResponse(responseCode = "200", description = "Every channel", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "422", description = "A query parameter: this operation takes none (invalid-request)")
    Mono<List<ChannelView>> list(@io.swagger.v3.oas.annotations.Parameter(hidden = true)
            org.springframework.web.server.ServerWebExchange exchange) {
        io.gosched.api.error.QueryParameters.only(exchange, List.of());
        return channels.listAll();
    }

    @GetMapping("/{name}")
    @Operation(operationId = "getChannel", summary = "One channel's state")
    @ApiResponse(responseCode = "200", description = "The channel's state", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "410", description = "Cluster mode: the channel's home node is gone (channel-lost)")
    Mono<ChannelView> get(@PathVariable String name) {
        return channels.describe(checked(name));
    }

    @PostMapping("/{name}/send")
    @Operation(operationId = "sendToChannel", summary = "Send a JSON value; sent=false (with a reason) means it was withdrawn and never will be delivered")
    @ApiResponse(responseCode = "200", description = "Sent, or withdrawn (timeout, shutdown)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "The channel is closed (channel-closed)")
    @ApiResponse(responseCode = "429", description = "The channel's share (gosched.api.limits.max-channel-bytes) or the memory "
            + "budget (gosched.api.limits.max-retained-bytes) has no room for the value (memory-budget), or "
            + "gosched.api.admission.max-pending-channel-calls calls are open (too-many-open); Retry-After says when to try again")
    @ApiResponse(responseCode = "410", description = "Cluster mode: the channel's home node is gone; the value may or may not have been delivered (channel-lost)")
    @ApiResponse(responseCode = "503", description = "Cluster mode: NATS or the home node cannot be reached; for a send the outcome is unknown, never 'not sent'")
    Mono<ChannelService.SendResult> send(@PathVariable String name, @Valid @RequestBody SendRequest body) {
        return channels.send(checked(name), body.value(), timeout(body.timeoutMs()));
    }

    @PostMapping("/{name}/recv")
    @Operation(operationId = "receiveFromChannel", summary = "Receive one value: received=false (with a reason) means nothing was taken")
    @ApiResponse(responseCode = "200", description = "Received, or nothing taken (timeout, closed and drained, shutdown)",
            useReturnTypeSchema = true)
    @ApiResponse(responseCode = "429", description = "gosched.api.admission.max-pending-channel-calls calls are open (too-many-open); "
            + "never for want of memory budget, since a receive frees it; Retry-After says when to try again")
    Mono<ChannelService.RecvResult> recv(@PathVariable String name, @Valid @RequestBody(required = false) RecvRequest body) {
        return channels.recv(checked(name), timeout(body == null ? null : body.timeoutMs()));
    }

    @PostMapping("/{name}/close")
    @Operation(operationId = "closeChannel", summary = "Close the channel (409 if already closed)")
    @ApiResponse(responseCode = "200", description = "Closed: the channel's state", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "409", description = "Already closed (channel-closed)")
    Mono<ChannelView> close(@PathVariable String name) {
        return channels.closeChannel(checked(name));
    }

    @DeleteMapping("/{name}")
    @ResponseStatus(HttpStatus.NO_CONTENT)
    @Operation(operationId = "deleteChannel", summary = "Delete the channel, closing it first if open")
    Mono<Void> delete(@PathVariable String name) {
        return channels.remove(checked(name));
    }

    /** The wait a request asked for (its range checked by its constraint), or the default. */
    private Duration timeout(Long ms) {
        return Duration.ofMillis(ms == null ? channels.registry().limits().defaultTimeoutMs() : ms);
    }

    /** A name that cannot exist is simply not found (and never reaches a map or a log line unchecked). */
    private static String checked(String name) {
        if (!ChannelName.isValid(name)) {
            throw ApiProblem.notFound("channel", name.length() > 64 ? name.substring(0, 64) + "..." : name);
        }
        return name;
    }
}
