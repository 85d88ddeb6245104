package io.gosched.service;

import java.time.Duration;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What the service takes on, prefix {@code gosched.api} (the settings the HTTP API always had;
 * the API's own, its token, are {@code io.gosched.api.ApiProperties} under the same prefix). Every
 * limit has a hard default so that an empty configuration is a safe one; a value outside its
 * bounds stops the application at start-up instead of weakening a limit silently.
 *
 * @param limits     what one request may ask for (the workload DSL's hard limits) and the memory budget
 * @param admission  how much work the service accepts before it refuses more
 * @param retention  how long finished jobs stay readable
 * @param channels   named channel limits
 */
@Validated
@ConfigurationProperties("gosched.api")
public record ServiceProperties(
        @Valid @NotNull @DefaultValue Limits limits,
        @Valid @NotNull @DefaultValue Admission admission,
        @Valid @NotNull @DefaultValue Retention retention,
        @Valid @NotNull @DefaultValue Channels channels) {

    /**
     * Hard limits of one request, and the memory budget of everything the service holds for
     * clients (docs/memory.md): values in channels and pending sends, jobs' requests, goroutine
     * stacks and results, idempotency entries, open streams and calls. A byte limit left unset
     * takes its default from the max heap; each is checked against the heap at start-up.
     *
     * @param maxBodyBytes          largest request body; beyond it 413
     * @param maxDepth              deepest nesting of spawn/loop step lists (the top level is 1)
     * @param maxSteps              most steps in one workload, nested ones included
     * @param maxGoroutinesPerJob   most goroutines one run may create (loops and spawns multiplied)
     * @param maxComputeUs          longest single compute step
     * @param maxHogUs              longest single hog step (no safe point: keep it short)
     * @param maxSleepMs            longest single sleep step
     * @param maxSyscallMs          longest single syscall step
     * @param maxTimes              most repetitions of one loop, send or recv
     * @param maxSpawn              most goroutines one spawn step starts
     * @param maxChannelsPerJob     most channels a workload declares
     * @param maxChannelCapacity    largest buffer of a channel (declared or created over HTTP)
     * @param maxSelectCases        most cases in one select step
     * @param defaultTimeoutMs      a job's deadline when the request names none
     * @param maxTimeoutMs          largest deadline a request may ask for
     * @param maxDelayMs            furthest {@code notBefore} in the future, and the longest retry back-off
     * @param maxAttempts           most attempts a retry policy may ask for
     * @param maxRetainedBytes      the memory budget; unset: half of the max heap ({@code Runtime.maxMemory()}),
     *                              and more than 80% of it stops the start; beyond it new work gets 429
     * @param maxChannelBytes       one named channel's share of the budget (its values and pending sends);
     *                              unset: an eighth of the budget
     * @param maxJobBytes           one job's share: its request, goroutine stacks and own channels; a job that
     *                              needs more is refused with 422; unset: a quarter of the budget
     */
    public record Limits(
            @Min(1024) @Max(16 * 1024 * 1024) @DefaultValue("65536") int maxBodyBytes,
            @Min(1) @Max(32) @DefaultValue("8") int maxDepth,
            @Min(1) @Max(100_000) @DefaultValue("1000") int maxSteps,
            @Min(1) @Max(10_000_000) @DefaultValue("100000") long maxGoroutinesPerJob,
            @Min(1) @Max(60_000_000) @DefaultValue("1000000") long maxComputeUs,
            @Min(1) @Max(1_000_000) @DefaultValue("50000") long maxHogUs,
            @Min(1) @Max(3_600_000) @DefaultValue("60000") long maxSleepMs,
            @Min(1) @Max(600_000) @DefaultValue("10000") long maxSyscallMs,
            @Min(1) @Max(10_000_000) @DefaultValue("100000") int maxTimes,
            @Min(1) @Max(1_000_000) @DefaultValue("10000") int maxSpawn,
            @Min(0) @Max(1024) @DefaultValue("32") int maxChannelsPerJob,
            @Min(0) @Max(10_000_000) @DefaultValue("100000") int maxChannelCapacity,
            @Min(1) @Max(1024) @DefaultValue("64") int maxSelectCases,
            @Min(1) @Max(86_400_000) @DefaultValue("30000") long defaultTimeoutMs,
            @Min(1) @Max(86_400_000) @DefaultValue("300000") long maxTimeoutMs,
            @Min(0) @Max(86_400_000) @DefaultValue("3600000") long maxDelayMs,
            @Min(1) @Max(100) @DefaultValue("10") int maxAttempts,
            @Min(1_048_576) Long maxRetainedBytes,
            @Min(65_536) Long maxChannelBytes,
            @Min(65_536) Long maxJobBytes) {}

    /**
     * Admission control: checked on every submission, before any memory is committed to the job.
     *
     * @param maxRunningJobs      jobs running at once; more wait in the priority queue
     * @param maxQueuedJobs       jobs waiting (queued, delayed or backing off); beyond it 429
     * @param maxLiveGoroutines   goroutines all running jobs may have reserved at once
     * @param retryAfter          what {@code Retry-After} says on a 429
     * @param maxOpenStreams      SSE streams open at once, telemetry and job events together; beyond it 429
     * @param maxPendingChannelCalls  HTTP channel sends and receives in flight at once; beyond it 429
     */
    public record Admission(
            @Min(1) @Max(1_000_000) @DefaultValue("256") int maxRunningJobs,
            @Min(0) @Max(10_000_000) @DefaultValue("10000") int maxQueuedJobs,
            @Min(1) @Max(100_000_000) @DefaultValue("1000000") long maxLiveGoroutines,
            @NotNull @DefaultValue("1s") Duration retryAfter,
            @Min(0) @Max(1_000_000) @DefaultValue("1000") int maxOpenStreams,
            @Min(0) @Max(10_000_000) @DefaultValue("10000") int maxPendingChannelCalls) {}

    /**
     * Retention of finished jobs: whichever bound is hit first evicts the oldest finished job.
     * Idempotency keys live exactly as long as their job.
     *
     * @param maxFinishedJobs  finished jobs kept
     * @param maxAge           how long a finished job is kept
     */
    public record Retention(
            @Min(0) @Max(10_000_000) @DefaultValue("10000") int maxFinishedJobs,
            @NotNull @DefaultValue("1h") Duration maxAge) {}

    /**
     * Named channels.
     *
     * @param maxChannels        channels that may exist at once
     * @param defaultTimeoutMs   how long an HTTP send or recv waits when the request names no timeout
     * @param maxTimeoutMs       longest an HTTP send or recv may wait
     */
    public record Channels(
            @Min(0) @Max(1_000_000) @DefaultValue("1024") int maxChannels,
            @Min(0) @Max(600_000) @DefaultValue("1000") long defaultTimeoutMs,
            @Min(0) @Max(600_000) @DefaultValue("30000") long maxTimeoutMs) {}

}
