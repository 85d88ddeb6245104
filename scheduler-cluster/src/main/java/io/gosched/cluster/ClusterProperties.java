package io.gosched.cluster;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Locale;

import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * Cluster mode, prefix {@code gosched.cluster}. Setting {@code gosched.cluster.nats.url} switches
 * it on; every other value has a default. Nodes of one cluster must agree on {@code ack-wait},
 * {@code max-deliver}, {@code replicas} and the stream limits (the last node to start writes them
 * into the server's consumer and stream configuration), and on {@code gosched.api.limits}.
 *
 * @param nats            the NATS server(s) to use
 * @param nodeId          this node's name in the cluster: unique among running nodes, stable across
 *                        restarts if you want its pinned jobs back; default: host name and pid
 * @param ackWait         how long a job's lease holds without renewal: after a node dies its jobs
 *                        are redelivered this long after its last renewal (renewals go out every third of it)
 * @param maxDeliver      deliveries of one job ticket before it is given up as {@code lost}
 * @param replicas        JetStream replicas of every stream and bucket: 1 for one NATS server, 3 for a
 *                        NATS cluster of three
 * @param connectTimeout  how long start-up waits for NATS before it fails
 * @param heartbeat       how often a node renews its presence; it counts as gone after three missed
 * @param forwardMargin   what a forwarded channel operation may take beyond its own timeout
 *                        (network, the home's scheduling) before the caller asks again
 * @param maxQueueBytes   size limit of the job queue stream; beyond it submissions get 429
 * @param maxStoreBytes   size limit of the job record bucket; beyond it submissions get 429
 * @param runJobs         false makes an intake node: it takes submissions, answers reads, serves its
 *                        channels and runs only the jobs pinned to it (those of its own channels),
 *                        leaving the shared queue to the nodes that run jobs; as a job queue's
 *                        insert-only client does, it lets API nodes scale apart from workers
 */
@Validated
@ConfigurationProperties("gosched.cluster")
public record ClusterProperties(
        @Valid @NotNull @DefaultValue Nats nats,
        @Pattern(regexp = "[A-Za-z0-9_-]{1,64}", message = "must be 1 to 64 letters, digits, '-' or '_'") String nodeId,
        @NotNull @DefaultValue("30s") Duration ackWait,
        @Min(1) @Max(100) @DefaultValue("5") int maxDeliver,
        @Min(1) @Max(5) @DefaultValue("1") int replicas,
        @NotNull @DefaultValue("30s") Duration connectTimeout,
        @NotNull @DefaultValue("2s") Duration heartbeat,
        @NotNull @DefaultValue("2s") Duration forwardMargin,
        @NotNull @DefaultValue("256MB") DataSize maxQueueBytes,
        @NotNull @DefaultValue("1GB") DataSize maxStoreBytes,
        @DefaultValue("true") boolean runJobs) {

    /**
     * Where NATS is.
     *
     * @param url  one server URL or several, comma-separated (a NATS cluster): {@code nats://host:4222}
     */
    public record Nats(
            @Pattern(regexp = "^((nats|tls|ws|wss)://[^\\s,]+)(,(nats|tls|ws|wss)://[^\\s,]+)*$",
                    message = "must be one or more comma-separated nats://host:port URLs") String url) {

        /** The server URLs, one per member. */
        public String[] servers() {
            return url.split(",");
        }
    }

    public ClusterProperties {
        if (nodeId == null || nodeId.isBlank()) {
            nodeId = defaultNodeId();
        }
    }

    @AssertTrue(message = "ack-wait must be between 1 second and 1 hour")
    boolean isAckWaitInRange() {
        return ackWait == null || (ackWait.compareTo(Duration.ofSeconds(1)) >= 0 && ackWait.compareTo(Duration.ofHours(1)) <= 0);
    }

    @AssertTrue(message = "connect-timeout must be between 0 and 10 minutes")
    boolean isConnectTimeoutInRange() {
        return connectTimeout == null || (!connectTimeout.isNegative() && connectTimeout.compareTo(Duration.ofMinutes(10)) <= 0);
    }

    @AssertTrue(message = "heartbeat must be between 100 milliseconds and 1 minute")
    boolean isHeartbeatInRange() {
        return heartbeat == null || (heartbeat.toMillis() >= 100 && heartbeat.compareTo(Duration.ofMinutes(1)) <= 0);
    }

    @AssertTrue(message = "forward-margin must be between 100 milliseconds and 1 minute")
    boolean isForwardMarginInRange() {
        return forwardMargin == null || (forwardMargin.toMillis() >= 100 && forwardMargin.compareTo(Duration.ofMinutes(1)) <= 0);
    }

    @AssertTrue(message = "max-queue-bytes must be between 1MB and 1TB")
    boolean isMaxQueueBytesInRange() {
        return maxQueueBytes == null || inRange(maxQueueBytes);
    }

    @AssertTrue(message = "max-store-bytes must be between 1MB and 1TB")
    boolean isMaxStoreBytesInRange() {
        return maxStoreBytes == null || inRange(maxStoreBytes);
    }

    private static boolean inRange(DataSize d) {
        return d.toBytes() >= DataSize.ofMegabytes(1).toBytes() && d.toBytes() <= DataSize.ofTerabytes(1).toBytes();
    }

    /** A node counts as gone once its heartbeat is this old. */
    public Duration nodeTtl() {
        return heartbeat.multipliedBy(3);
    }

    /** How often the lease renewer sends in-progress acks: a third of the ack wait. */
    public Duration renewEvery() {
        return ackWait.dividedBy(3);
    }

    /** Host name and pid, made fit for a subject token: {@code web-1-4711}. */
    public static String defaultNodeId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "node";
            }
        }
        String pid = Long.toString(ProcessHandle.current().pid());
        String clean = host.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]+", "-").replaceAll("^-+|-+$", "");
        if (clean.isEmpty()) {
            clean = "node";
        }
        int room = 64 - pid.length() - 1;
        return (clean.length() > room ? clean.substring(0, room) : clean) + "-" + pid;
    }
}
