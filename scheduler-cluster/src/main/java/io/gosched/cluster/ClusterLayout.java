package io.gosched.cluster;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import io.gosched.service.job.spi.JobTicket;

/**
 * Every name gosched uses on NATS, in one place (docs/cluster.md, "Layout"):
 *
 * <pre>
 * stream GOSCHED_JOBS   work queue, file, Nats-Msg-Id dedupe, max bytes, discard new
 *   gosched.jobs.ready.&lt;p&gt;.&lt;job&gt;      consumer ready-p&lt;p&gt; (p = 0..9)   a ticket that may run now
 *   gosched.jobs.delayed.&lt;job&gt;        consumer delayed               a ticket before its notBefore
 *   gosched.jobs.node.&lt;node&gt;.&lt;job&gt;    consumer node-&lt;node&gt;           a ticket only that node may run
 * stream GOSCHED_DEAD   work queue, file: the server's max-deliveries advisories of GOSCHED_JOBS
 *   $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.GOSCHED_JOBS.*   consumer dead
 * KV gosched_jobs       job id -&gt; JobRecord (JSON); CAS by revision
 * KV gosched_idem       sha256(Idempotency-Key) -&gt; {jobId, bodyHash}; created with create()
 * KV gosched_channels   channel name ('.' as "=2E") -&gt; {node, incarnation, capacity, createdAt}
 * KV gosched_nodes      node id -&gt; heartbeat; TTL three heartbeats; key "leader" -&gt; the leader node
 * KV gosched_schedules  schedule name -&gt; ScheduleRecord (JSON); CAS by revision decides each tick once
 * gosched.kick          core NATS: "a ticket became ready", wakes idle pullers
 * gosched.progress.&lt;job&gt;   core NATS: live counters of a running attempt
 * gosched.chan.&lt;node&gt;    core NATS request-reply: forwarded channel operations for that node's channels
 * </pre>
 * One job id per subject keeps every ticket addressable: a cancelled job's waiting ticket is
 * purged by subject instead of occupying the queue until its delivery.
 */
public final class ClusterLayout {

    public static final String JOBS_STREAM = "GOSCHED_JOBS";
    public static final String DEAD_STREAM = "GOSCHED_DEAD";
    public static final String DEAD_CONSUMER = "dead";
    public static final String DELAYED_CONSUMER = "delayed";
    public static final String JOBS_BUCKET = "gosched_jobs";
    public static final String IDEM_BUCKET = "gosched_idem";
    public static final String CHANNELS_BUCKET = "gosched_channels";
    public static final String NODES_BUCKET = "gosched_nodes";
    public static final String SCHEDULES_BUCKET = "gosched_schedules";
    public static final String LEADER_KEY = "leader";
    public static final String KICK_SUBJECT = "gosched.kick";

    /** Headers of a ticket message. */
    public static final String H_JOB = "Gosched-Job";
    public static final String H_TICKET = "Gosched-Ticket";
    public static final String H_PRIORITY = "Gosched-Priority";
    public static final String H_NOT_BEFORE = "Gosched-Not-Before";
    public static final String H_NODE = "Gosched-Node";

    private ClusterLayout() {}

    public static String jobsSubjects() {
        return "gosched.jobs.>";
    }

    public static String deadSubjects() {
        return "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + JOBS_STREAM + ".*";
    }

    public static String readyConsumer(int priority) {
        return "ready-p" + priority;
    }

    public static String readyFilter(int priority) {
        return "gosched.jobs.ready." + priority + ".*";
    }

    public static String delayedFilter() {
        return "gosched.jobs.delayed.*";
    }

    public static String nodeConsumer(String node) {
        return "node-" + node;
    }

    public static String nodeFilter(String node) {
        return "gosched.jobs.node." + node + ".*";
    }

    /** Filters matching every subject a ticket of job {@code jobId} can be on: runnable (any priority or node), delayed. */
    public static List<String> jobTicketFilters(String jobId) {
        return List.of("gosched.jobs.*.*." + jobId, "gosched.jobs.delayed." + jobId);
    }

    /** Where a ticket waits once it may run: its node's subject if pinned, else its priority's. */
    public static String runnableSubject(JobTicket t) {
        return t.node() != null ? "gosched.jobs.node." + t.node() + "." + t.jobId() : "gosched.jobs.ready." + t.priority() + "." + t.jobId();
    }

    public static String delayedSubject(JobTicket t) {
        return "gosched.jobs.delayed." + t.jobId();
    }

    /**
     * The ticket's Nats-Msg-Id on its runnable subject: the job id for the first ticket (so a
     * retried submission is deduplicated by job id), {@code <job>:<n>} for later ones.
     */
    public static String messageId(JobTicket t) {
        return t.number() == 1 ? t.jobId() : t.jobId() + ":" + t.number();
    }

    /** The Nats-Msg-Id of the ticket's delayed message; distinct, since both sit in one stream's dedupe window. */
    public static String delayedMessageId(JobTicket t) {
        return messageId(t) + "~delayed";
    }

    public static String progressSubject(String jobId) {
        return "gosched.progress." + jobId;
    }

    public static String channelSubject(String node) {
        return "gosched.chan." + node;
    }

    /** A KV key for an Idempotency-Key: any printable ASCII of up to 255 characters becomes 64 hex digits. */
    public static String idemKey(String idempotencyKey) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(idempotencyKey.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * A KV key for a channel name. Names may hold '.', which KV keys take only between tokens
     * ("a." and "a..b" are valid names but not keys); names never hold '=', so "=2E" is unambiguous.
     */
    public static String channelKey(String name) {
        return name.replace(".", "=2E");
    }

    public static String channelName(String key) {
        return key.replace("=2E", ".");
    }
}
