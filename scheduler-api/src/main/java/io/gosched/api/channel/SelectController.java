package io.gosched.api.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.gosched.service.channel.ChannelName;
import io.gosched.service.channel.ChannelSelect;
import io.gosched.service.channel.ChannelService;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.Violation;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** Go's {@code select} over named channels: one request waits on several channels, one case fires. */
@RestController
@RequestMapping("/api/v1/select")
@Tag(name = "Channels", description = "Named channels shared by jobs and HTTP clients")
class SelectController {

    /** Cases one select may hold: far more than a Go program writes, few enough that one request stays small. */
    static final int MAX_CASES = 64;

    /** One case: exactly one of {@code recv} and {@code send}; a send carries {@code value} (a JSON null is one). */
    @Schema(description = "One case: {\"recv\": \"<channel>\"} or {\"send\": \"<channel>\", \"value\": <any JSON value, null included>}")
    record SelectCaseRequest(
            @Pattern(regexp = ChannelName.REGEXP) @Schema(description = "Receive from this channel") String recv,
            @Pattern(regexp = ChannelName.REGEXP) @Schema(description = "Send `value` on this channel") String send,
            @Schema(description = "The value a send case sends (required for it, any JSON value, null included)") JsonNode value) {}

    /** Body of POST /api/v1/select. */
    record SelectRequest(
            @NotNull @Size(min = 1, max = MAX_CASES) List<@NotNull @Valid SelectCaseRequest> cases,
            @ChannelConstraints.Timeout Long timeoutMs) {}

    private final ChannelSelect select;
    private final ChannelService channels;

    SelectController(ChannelSelect select, ChannelService channels) {
        this.select = select;
        this.channels = channels;
    }

    @PostMapping
    @Operation(operationId = "selectChannels", summary = "Go's select: wait on several channels at once; one case fires, chosen uniformly "
            + "among the ready ones, and nothing is sent or taken on the others (also on timeout or when the client goes away)",
            description = "Answers {\"index\": i, \"value\": v, \"ok\": true} for the receive case i that fired (ok=false: the channel "
                    + "is closed and drained, value null, as Go's v, ok := <-ch), {\"index\": i} for a send case, or "
                    + "{\"timedOut\": true, \"reason\": \"timeout\" | \"shutdown\"} when none fired. Cases may repeat a channel. "
                    + "In cluster mode a select whose channels live on other nodes runs in rounds of non-blocking attempts "
                    + "(docs/cluster.md): still exactly one case fires.")
    @ApiResponse(responseCode = "200", description = "A case fired, or none did before the timeout (timedOut)", useReturnTypeSchema = true)
    @ApiResponse(responseCode = "404", description = "A case names a channel that does not exist (not-found)")
    @ApiResponse(responseCode = "409", description = "A send case on a closed channel fired (channel-closed; Go panics): nothing was sent")
    @ApiResponse(responseCode = "422", description = "A bad case (invalid-request, the pointer names it: /cases/2/send)")
    @ApiResponse(responseCode = "429", description = "A send's value does not fit its channel's share or the memory budget (memory-budget), "
            + "or gosched.api.admission.max-pending-channel-calls calls are open (too-many-open); Retry-After says when to try again")
    @ApiResponse(responseCode = "410", description = "Cluster mode: a channel's home node is gone (channel-lost)")
    @ApiResponse(responseCode = "503", description = "Shutting down, or cluster mode: NATS or a home node cannot be reached; "
            + "for a send case the outcome is then unknown")
    Mono<ChannelSelect.Outcome> select(@Valid @RequestBody SelectRequest body) {
        return select.select(cases(body.cases()), timeout(body.timeoutMs()));
    }

    /** Each case exactly one of recv and send, a send with its value: every bad case named, not only the first. */
    private static List<ChannelOutcome.SelectCase> cases(List<SelectCaseRequest> in) {
        List<Violation> bad = new ArrayList<>();
        List<ChannelOutcome.SelectCase> out = new ArrayList<>(in.size());
        for (int i = 0; i < in.size(); i++) {
            SelectCaseRequest c = in.get(i);
            String at = "/cases/" + i;
            if (c.recv() != null && c.send() != null) {
                bad.add(new Violation(at + "/send", "a case is either a receive or a send, not both (recv is given too)"));
            } else if (c.recv() == null && c.send() == null) {
                bad.add(new Violation(at, "must have \"recv\": \"<channel>\" or \"send\": \"<channel>\" with \"value\""));
            } else if (c.send() != null && c.value() == null) {
                bad.add(new Violation(at + "/value", "is required for a send case (any JSON value, null included)"));
            } else if (c.recv() != null && c.value() != null) {
                bad.add(new Violation(at + "/value", "only a send case takes a value"));
            } else {
                out.add(c.send() != null ? new ChannelOutcome.SelectCase(c.send(), true, c.value()) : new ChannelOutcome.SelectCase(c.recv(), false, null));
            }
        }
        if (!bad.isEmpty()) {
            throw new InvalidRequestException(bad);
        }
        return out;
    }

    /** The wait a request asked for (its range checked by its constraint), or the channel calls' default. */
    private Duration timeout(Long ms) {
        return Duration.ofMillis(ms == null ? channels.registry().limits().defaultTimeoutMs() : ms);
    }
}
