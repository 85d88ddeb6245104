package io.gosched.web.telemetry;

import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Settings of the telemetry layer: how long one {@code SchedStats} read is reused, how the SSE
 * stream paces itself and how large the trace recorder's rings are.
 *
 * @param snapshotTtl how long one stats read is shared by every meter of a scrape and every stream
 *     subscriber; a scrape of all gosched meters finishes well inside it, so one scrape sees one
 *     consistent snapshot
 * @param stream the SSE stream at {@code /api/v1/telemetry/stream}
 * @param trace the recorder behind {@code /api/v1/trace}
 */
@Validated
@ConfigurationProperties("gosched.telemetry")
public record TelemetryProperties(
        @NotNull @DefaultValue("20ms") Duration snapshotTtl,
        @NotNull @Valid @DefaultValue Stream stream,
        @NotNull @Valid @DefaultValue Trace trace) {

    /**
     * @param capacityPerP events kept per P (and in the shared ring for events outside any P); the
     *     rings keep the newest, so a busy P over a long recording loses its oldest events (counted
     *     as {@code dropped} in the export). About 32 bytes a slot: the default 65536 is 2 MiB per
     *     P, allocated only while a recording runs. The core's bounds: 1 to 1048576.
     */
    public record Trace(@Min(1) @Max(1 << 20) @DefaultValue("65536") int capacityPerP) {
    }

    /**
     * @param defaultInterval the interval between snapshots when the request names none
     * @param minInterval the smallest {@code intervalMs} a client may ask for (also the tick of the
     *     shared hot source every stream samples)
     * @param maxInterval the largest {@code intervalMs} a client may ask for
     * @param keepalive how often a comment line keeps idle proxies from closing the stream
     */
    public record Stream(
            @NotNull @DefaultValue("1s") Duration defaultInterval,
            @NotNull @DefaultValue("100ms") Duration minInterval,
            @NotNull @DefaultValue("10s") Duration maxInterval,
            @NotNull @DefaultValue("15s") Duration keepalive) {

        /** The bounds must hold the default, and the tick must be a real period. */
        @AssertTrue(message = "must satisfy 0 < min-interval <= default-interval <= max-interval")
        public boolean isOrdered() {
            return minInterval == null || defaultInterval == null || maxInterval == null
                    || (minInterval.isPositive() && minInterval.compareTo(defaultInterval) <= 0
                            && defaultInterval.compareTo(maxInterval) <= 0);
        }

        @AssertTrue(message = "keepalive must be positive")
        public boolean isKeepalivePositive() {
            return keepalive == null || keepalive.isPositive();
        }
    }

    @AssertTrue(message = "snapshot-ttl must not be negative")
    public boolean isSnapshotTtlValid() {
        return snapshotTtl == null || !snapshotTtl.isNegative();
    }
}
