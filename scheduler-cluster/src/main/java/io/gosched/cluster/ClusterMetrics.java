package io.gosched.cluster;

import java.time.Duration;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The cluster's meters, each tagged with this node (docs/cluster.md, "Metrics"):
 * <pre>
 * gosched_jobs_redelivered_total{node}              tickets this node pulled whose earlier lease lapsed (a takeover)
 * gosched_jobs_lost_total{node}                     tickets this node gave up as lost (max-deliver reached)
 * gosched_cluster_queue_depth{node,queue}           tickets waiting, per consumer (ready-p0..p9, delayed, node-&lt;id&gt;)
 * gosched_cluster_queue_pending_acks{node,queue}    tickets handed out and not yet acked, per consumer
 * gosched_cluster_pull_latency_seconds{node}        one pull: the scan of the node's consumers, highest priority first
 * gosched_cluster_connected{node}                   1 while connected to NATS
 * gosched_cluster_reconnects_total{node}            reconnections to NATS
 * </pre>
 * Without a registry every call is a no-op. Thread-safe.
 */
public final class ClusterMetrics {

    private final MeterRegistry registry;
    private final Tags node;
    private final Counter redelivered;
    private final Counter lost;
    private final Timer pullLatency;

    /** @param registry where to record, or null for nothing */
    public ClusterMetrics(MeterRegistry registry, String nodeId) {
        this.registry = registry;
        this.node = Tags.of("node", nodeId);
        if (registry == null) {
            redelivered = null;
            lost = null;
            pullLatency = null;
            return;
        }
        redelivered = Counter.builder("gosched.jobs.redelivered").tags(node)
                .description("job tickets pulled again after the lease of a node on them lapsed (the node died or stalled)")
                .register(registry);
        lost = Counter.builder("gosched.jobs.lost").tags(node)
                .description("jobs failed as lost: their ticket was delivered max-deliver times and never completed")
                .register(registry);
        pullLatency = Timer.builder("gosched.cluster.pull.latency").tags(node)
                .description("one pull of job tickets: the scan of this node's consumers, highest priority first")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
    }

    public static ClusterMetrics none(String nodeId) {
        return new ClusterMetrics(null, nodeId);
    }

    public void redelivered() {
        if (redelivered != null) {
            redelivered.increment();
        }
    }

    public void lost() {
        if (lost != null) {
            lost.increment();
        }
    }

    public void pulled(long nanos) {
        if (pullLatency != null) {
            pullLatency.record(Duration.ofNanos(nanos));
        }
    }

    /** Gauges of one consumer's depth and pending acks, read from {@code source} (cached values: scrapes never call NATS). */
    public <T> void queue(String queue, T source, ToDoubleFunction<T> depth, ToDoubleFunction<T> pendingAcks) {
        if (registry == null) {
            return;
        }
        Gauge.builder("gosched.cluster.queue.depth", source, depth).tags(node).tag("queue", queue)
                .description("job tickets waiting in this consumer (from the consumer info)").strongReference(true).register(registry);
        Gauge.builder("gosched.cluster.queue.pending.acks", source, pendingAcks).tags(node).tag("queue", queue)
                .description("job tickets handed out by this consumer and not yet acked").strongReference(true).register(registry);
    }

    public void connection(ClusterConnection conn) {
        if (registry == null) {
            return;
        }
        Gauge.builder("gosched.cluster.connected", conn, c -> c.isUp() ? 1 : 0).tags(node)
                .description("1 while this node is connected to NATS").strongReference(true).register(registry);
        FunctionCounter.builder("gosched.cluster.reconnects", conn, ClusterConnection::reconnects).tags(node)
                .description("reconnections to NATS").register(registry);
    }

    /** Counter values, for tests and the node's own status. */
    public double redeliveredCount() {
        return redelivered == null ? 0 : redelivered.count();
    }

    public double lostCount() {
        return lost == null ? 0 : lost.count();
    }
}
