package io.gosched.web.metrics;

import io.gosched.runtime.LatencyHistogram;
import io.gosched.web.telemetry.SchedStatsSource;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Exports the core's scheduling-latency histogram (runnable → running, Go's
 * {@code /sched/latencies:seconds}) as a real Prometheus histogram,
 * {@code gosched_sched_latencies_seconds_{bucket,count,sum}}.
 *
 * <p>Why a Prometheus {@link Collector} and not a Micrometer {@code Timer}: the core already holds
 * the observations as bucket counts. A Micrometer timer can only be fed observation by observation
 * (replaying millions of records per scrape, with a made-up value per bucket and a wrong sum), and a
 * custom {@code Meter} of type OTHER is exported by micrometer-registry-prometheus 1.16 as a
 * gauge per statistic, never with {@code le} buckets. Registering on the very
 * {@link PrometheusRegistry} that backs Micrometer's registry puts the histogram on
 * {@code /actuator/prometheus} next to the Micrometer meters, in both the text and OpenMetrics
 * formats.
 *
 * <p>{@link ClassicHistogramBuckets} takes per-bucket (non-cumulative) counts with a last bound of
 * +Inf, which is exactly the core's {@link LatencyHistogram} layout; the exposition format
 * accumulates them into {@code le} buckets.
 */
final class SchedLatencyCollector implements Collector {

    static final String NAME = "gosched_sched_latencies_seconds";

    private final SchedStatsSource source;
    private final Labels labels;
    private PrometheusRegistry registeredOn; // guarded by this

    /** @param labels the common tags Micrometer adds to its own meters, so this series matches them */
    SchedLatencyCollector(SchedStatsSource source, Map<String, String> labels) {
        this.source = source;
        this.labels = Labels.of(new ArrayList<>(labels.keySet()), new ArrayList<>(labels.values()));
    }

    @Override
    public MetricSnapshot collect() {
        LatencyHistogram h = source.stats().schedLatency();
        ClassicHistogramBuckets buckets = ClassicHistogramBuckets.of(h.upperBoundsSeconds(), h.counts());
        var point = new HistogramSnapshot.HistogramDataPointSnapshot(
                buckets, h.sumSeconds(), labels, Exemplars.EMPTY, 0L);
        return new HistogramSnapshot(
                new MetricMetadata(NAME, "Time goroutines spent runnable before running (Go: /sched/latencies:seconds)",
                        Unit.SECONDS),
                List.of(point));
    }

    @Override
    public String getPrometheusName() {
        return NAME;
    }

    /** Registers this collector once; a second binding to the same registry is a no-op. */
    synchronized void registerOnce(PrometheusRegistry registry) {
        if (registeredOn == null) {
            registry.register(this);
            registeredOn = registry;
        }
    }

    synchronized void unregister() {
        if (registeredOn != null) {
            registeredOn.unregister(this);
            registeredOn = null;
        }
    }
}
