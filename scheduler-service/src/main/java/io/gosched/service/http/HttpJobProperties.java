package io.gosched.service.http;

import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * What HTTP-target jobs may call, prefix {@code gosched.jobs.http}. Empty by default: a service
 * that calls any URL its clients name is an open relay (into the network it runs in, too), so an
 * HTTP job is refused until the operator lists the URL prefixes it may reach.
 *
 * @param allowedTargets    URL prefixes a job may call, such as {@code https://api.example.com/hooks/};
 *                          a URL matches when scheme, host and port are the prefix's and its path
 *                          continues the prefix's path (a prefix path not ending in {@code /} matches
 *                          itself and what follows a {@code /}, {@code ?} after it). Empty: HTTP jobs are off
 * @param targets           per-target limits, as a task queue's rate limits; a call is limited by the
 *                          first entry whose {@code url} prefix it matches
 * @param defaultTimeoutMs  a call's timeout when the job names none (bounded by the job's own timeoutMs)
 * @param connectTimeoutMs  how long opening a connection may take
 * @param maxResponseBytes  largest response body a job keeps; a larger one fails the attempt (and is
 *                          bounded again by the job's share of the memory budget)
 * @param maxRedirects      redirects followed within the allowed targets before the attempt fails
 * @param clientThreads     platform threads of the HTTP client (completions and TLS); calls wait as
 *                          parked goroutines, not on these
 */
@Validated
@ConfigurationProperties("gosched.jobs.http")
public record HttpJobProperties(
        @NotNull @DefaultValue List<@NotBlank String> allowedTargets,
        @Valid @NotNull @DefaultValue List<Target> targets,
        @Min(1) @Max(3_600_000) @DefaultValue("30000") long defaultTimeoutMs,
        @Min(1) @Max(600_000) @DefaultValue("5000") long connectTimeoutMs,
        @Min(1024) @DefaultValue("1048576") long maxResponseBytes,
        @Min(0) @Max(20) @DefaultValue("10") int maxRedirects,
        @Min(1) @Max(64) @DefaultValue("2") int clientThreads) {

    /**
     * Limits of the calls to one target.
     *
     * @param url            the URL prefix the limits apply to (matched as {@code allowed-targets} are)
     * @param maxConcurrent  calls in flight at once; 0 = no limit
     * @param maxPerSecond   calls started per second, spaced evenly; 0 = no limit
     */
    public record Target(@NotBlank String url, @Min(0) @DefaultValue("0") int maxConcurrent,
            @Min(0) @DefaultValue("0") double maxPerSecond) {}

    /** The defaults: no target allowed. */
    public static HttpJobProperties defaults() {
        return new HttpJobProperties(List.of(), List.of(), 30_000, 5_000, 1 << 20, 10, 2);
    }

    /** The defaults with {@code prefixes} allowed. */
    public static HttpJobProperties allowing(String... prefixes) {
        return new HttpJobProperties(List.of(prefixes), List.of(), 30_000, 5_000, 1 << 20, 10, 2);
    }

    public HttpJobProperties withTargets(List<Target> t) {
        return new HttpJobProperties(allowedTargets, t, defaultTimeoutMs, connectTimeoutMs, maxResponseBytes, maxRedirects, clientThreads);
    }

    public HttpJobProperties withMaxResponseBytes(long n) {
        return new HttpJobProperties(allowedTargets, targets, defaultTimeoutMs, connectTimeoutMs, n, maxRedirects, clientThreads);
    }
}
