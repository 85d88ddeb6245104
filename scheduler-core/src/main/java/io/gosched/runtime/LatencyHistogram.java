package io.gosched.runtime;

/**
 * A snapshot of a latency histogram. {@code counts[i]} counts observations in
 * ({@code upperBoundsSeconds[i-1]}, {@code upperBoundsSeconds[i]}] (not cumulative); the last
 * bound is {@code +Inf}.
 */
public record LatencyHistogram(double[] upperBoundsSeconds, long[] counts, long count, double sumSeconds) {
}
