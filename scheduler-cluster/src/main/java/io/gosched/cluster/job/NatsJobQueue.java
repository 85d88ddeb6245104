package io.gosched.cluster.job;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.gosched.service.error.BackendFullException;
import io.gosched.service.job.JobSpec;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.cluster.ClusterConnection;
import io.gosched.cluster.ClusterLayout;
import io.gosched.cluster.ClusterMetrics;
import io.gosched.cluster.ClusterProperties;
import io.gosched.cluster.Provisioning;
import io.nats.client.ConsumerContext;
import io.nats.client.Dispatcher;
import io.nats.client.FetchConsumeOptions;
import io.nats.client.FetchConsumer;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamStatusCheckedException;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.PurgeOptions;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfoOptions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The job queue on JetStream ({@link ClusterLayout}): one work-queue stream with file storage,
 * a durable pull consumer per priority level, one for delayed tickets and one per node for the
 * tickets pinned to it.
 *
 * <h2>How the queue's promises are kept</h2>
 * <ul>
 * <li><b>Highest priority first, only as many as there is room for</b>: {@link #pull} asks this
 *     node's pinned consumer, then {@code ready-p9} down to {@code ready-p0}, each for at most the
 *     room left, without waiting (no-wait fetches), skipping the consumers known to be empty (see
 *     {@link ConsumerKicks}). An idle puller sleeps until a kick on {@code gosched.kick}
 *     (sent after every enqueue that makes a ticket runnable, naming its consumer) or its
 *     {@code maxWait}, whichever comes first, and scans again. An intake node
 *     ({@code gosched.cluster.run-jobs=false}) asks only its pinned consumer: the jobs of its own
 *     channels can run nowhere else, the shared ones are the other nodes'.</li>
 * <li><b>Never before notBefore</b>: JetStream 2.9 has no delayed messages, so a ticket due in
 *     the future goes to {@code gosched.jobs.delayed.<job>}. The delay pump (a platform thread on
 *     every node) pulls those and naks each with the time left ({@code nakWithDelay}); when the
 *     server hands one out again and it is due, the pump publishes it to its runnable subject
 *     and acks the delayed copy. The wait never runs against a runner's ack wait, and the
 *     runnable consumers' delivery counts count only lapsed leases.</li>
 * <li><b>At least once, leases kept alive by a platform thread</b>: runnable consumers have
 *     explicit acks, AckWait = {@code ack-wait} and MaxDeliver = {@code max-deliver}; the
 *     {@link LeaseRenewer} sends the in-progress acks.</li>
 * <li><b>Dead letter</b>: the server's max-deliveries advisories are captured by the stream
 *     {@code GOSCHED_DEAD}, so none is missed while no node listens; the dead-letter worker hands
 *     each to the {@link LostHandler}, then deletes the ticket (which a work queue would
 *     otherwise keep for ever) and acks the advisory.</li>
 * <li><b>Dedupe</b>: Nats-Msg-Id per ticket ({@link ClusterLayout#messageId}); the stream's
 *     duplicate window covers a publish retried after a lost answer, and the pump's re-publish
 *     of a delayed ticket after a crash.</li>
 * <li><b>NATS cannot be filled</b>: the stream has {@code max-queue-bytes} with discard-new, so
 *     a full queue refuses the submission ({@link BackendFullException}, 429) instead of growing
 *     or dropping old tickets.</li>
 * </ul>
 * Thread-safe.
 */
public final class NatsJobQueue implements JobQueue, AutoCloseable {

    private static final Log log = LogFactory.getLog(NatsJobQueue.class);
    private static final byte[] EMPTY = new byte[0];
    /**
     * The delayed consumer's ack wait. The pump holds a delayed ticket only while it naks or
     * publishes it, so the wait matters only when a nak is lost: a server killed before it
     * stored the consumer's latest state (or a pump that died between fetch and nak) leaves the
     * ticket handed out with no nak, and it comes back only after this wait. With 30 s, delayed
     * tickets due in half a second were still missing 20 s after a restart (NatsJobQueueContract
     * .aKilledServerRestartsWithEveryTicketItAcknowledged, once in CI). A pump slower than this
     * gets the ticket again and publishes it twice, which the stream's duplicate window absorbs.
     */
    static final Duration DELAYED_ACK_WAIT = Duration.ofSeconds(5);
    /** A delayed ticket due within this is treated as due: a nak shorter than the round trip buys nothing. */
    private static final Duration DUE_SLACK = Duration.ofMillis(5);
    /** The most tickets one pump or dead-letter fetch takes. */
    private static final int BATCH = 256;
    /** How long background fetches wait for a message before they look at their stop flag again. */
    private static final long IDLE_WAIT_MS = 1000;
    /** Consumers of a node that has been away this long are removed by the server (its tickets stay). */
    private static final Duration NODE_CONSUMER_INACTIVE = Duration.ofDays(7);

    private final ClusterConnection conn;
    private final ClusterMetrics metrics;
    private final Clock clock;
    private final ClusterProperties props;
    private final LeaseRenewer renewer;
    /** Pull order: this node's pinned consumer, then ready-p9 .. ready-p0. */
    private final List<ConsumerContext> pullOrder = new ArrayList<>();
    /** How many of {@link #pullOrder} a scan asks: all of them, or only the pinned consumer on an intake node. */
    private final int pulledConsumers;
    private ConsumerContext delayed;
    private ConsumerContext dead;
    /** Consumer info per consumer name, refreshed in the background (scrapes and depth() never call NATS). */
    private final Map<String, AtomicReference<ConsumerInfo>> info = new LinkedHashMap<>();
    /** Which consumers a scan asks, and the wait for a kick; made once the pull order is known. */
    private volatile ConsumerKicks kicks;
    private Dispatcher kickDispatcher;
    private final List<Thread> workers = new ArrayList<>();
    private final ScheduledExecutorService infoPoller;
    private volatile boolean running = true;
    private final DeadLetters deadLetters;

    private NatsJobQueue(ClusterConnection conn, ClusterMetrics metrics, Clock clock) {
        this.conn = conn;
        this.metrics = metrics;
        this.clock = clock;
        this.props = conn.properties();
        this.pulledConsumers = props.runJobs() ? Integer.MAX_VALUE : 1;
        this.renewer = new LeaseRenewer(conn, props.renewEvery());
        this.deadLetters = new DeadLetters(conn, metrics);
        this.infoPoller = Executors.newSingleThreadScheduledExecutor(
                r -> Thread.ofPlatform().name("gosched-queue-info").daemon(true).unstarted(r));
    }

    /** Creates (or updates) the streams and consumers and starts the pump and the dead-letter worker. */
    public static NatsJobQueue start(ClusterConnection conn, ClusterMetrics metrics, Clock clock) {
        NatsJobQueue q = new NatsJobQueue(conn, metrics, clock);
        try {
            Provisioning.retrying(conn.properties().connectTimeout(), "setting up the job queue", () -> {
                q.provision();
            });
        } catch (IOException | JetStreamApiException e) {
            q.close();
            throw new IllegalStateException("cluster mode: cannot set up the job queue on NATS: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            q.close();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("cluster mode: interrupted while setting up the job queue on NATS", e);
        }
        q.startWorkers();
        return q;
    }

    private void provision() throws IOException, JetStreamApiException {
        var jsm = conn.management();
        pullOrder.clear(); // a try again starts from the top
        // The window covers a publish retried after its answer was lost, and a delayed ticket the
        // pump published again after a crash before its ack (redelivered after the ack wait).
        Duration window = max(Duration.ofMinutes(2), props.ackWait().multipliedBy(2));
        Provisioning.stream(jsm, StreamConfiguration.builder().name(ClusterLayout.JOBS_STREAM)
                .description("gosched job tickets: runnable per priority, delayed, and pinned to a node")
                .subjects(ClusterLayout.jobsSubjects())
                .retentionPolicy(RetentionPolicy.WorkQueue)
                .storageType(StorageType.File)
                .replicas(props.replicas())
                .maxBytes(props.maxQueueBytes().toBytes())
                .discardPolicy(DiscardPolicy.New)
                .duplicateWindow(window)
                .build());
        Provisioning.stream(jsm, StreamConfiguration.builder().name(ClusterLayout.DEAD_STREAM)
                .description("max-deliveries advisories of GOSCHED_JOBS: tickets whose leases lapsed max-deliver times")
                .subjects(ClusterLayout.deadSubjects())
                .retentionPolicy(RetentionPolicy.WorkQueue)
                .storageType(StorageType.File)
                .replicas(props.replicas())
                .maxBytes(Math.max(1 << 20, props.maxQueueBytes().toBytes() / 16))
                .discardPolicy(DiscardPolicy.Old) // advisories are small; if ever full, the oldest go
                .build());
        String nodeConsumer = ClusterLayout.nodeConsumer(conn.nodeId());
        Provisioning.consumer(jsm, ClusterLayout.JOBS_STREAM, runnable(nodeConsumer, ClusterLayout.nodeFilter(conn.nodeId()))
                .inactiveThreshold(NODE_CONSUMER_INACTIVE).build());
        pullOrder.add(context(ClusterLayout.JOBS_STREAM, nodeConsumer));
        for (int p = JobSpec.MAX_PRIORITY; p >= JobSpec.MIN_PRIORITY; p--) {
            String name = ClusterLayout.readyConsumer(p);
            Provisioning.consumer(jsm, ClusterLayout.JOBS_STREAM, runnable(name, ClusterLayout.readyFilter(p)).build());
            pullOrder.add(context(ClusterLayout.JOBS_STREAM, name));
        }
        Provisioning.consumer(jsm, ClusterLayout.JOBS_STREAM, ConsumerConfiguration.builder()
                .durable(ClusterLayout.DELAYED_CONSUMER).filterSubject(ClusterLayout.delayedFilter())
                .ackPolicy(AckPolicy.Explicit).deliverPolicy(DeliverPolicy.All)
                .ackWait(DELAYED_ACK_WAIT)
                .maxDeliver(-1) // a delayed ticket is nak'ed once per wait, as often as it takes
                .maxAckPending(1_000_000) // every waiting delayed ticket is "pending" after its nak
                .build());
        delayed = context(ClusterLayout.JOBS_STREAM, ClusterLayout.DELAYED_CONSUMER);
        Provisioning.consumer(jsm, ClusterLayout.DEAD_STREAM, ConsumerConfiguration.builder()
                .durable(ClusterLayout.DEAD_CONSUMER).ackPolicy(AckPolicy.Explicit).deliverPolicy(DeliverPolicy.All)
                .ackWait(Duration.ofSeconds(30)).maxDeliver(-1).build());
        dead = context(ClusterLayout.DEAD_STREAM, ClusterLayout.DEAD_CONSUMER);
        for (ConsumerContext c : pullOrder) {
            trackInfo(c);
        }
        trackInfo(delayed);
    }

    private ConsumerConfiguration.Builder runnable(String name, String filter) {
        return ConsumerConfiguration.builder().durable(name).filterSubject(filter)
                .ackPolicy(AckPolicy.Explicit).deliverPolicy(DeliverPolicy.All)
                .ackWait(props.ackWait())
                .maxDeliver(props.maxDeliver())
                .maxAckPending(1_000_000); // admission, not the server, bounds what a node holds
    }

    private ConsumerContext context(String stream, String consumer) throws IOException, JetStreamApiException {
        return conn.nats().getConsumerContext(stream, consumer);
    }

    private void trackInfo(ConsumerContext c) {
        AtomicReference<ConsumerInfo> ref = new AtomicReference<>(c.getCachedConsumerInfo());
        String name = c.getConsumerName();
        info.put(name, ref);
        String queue = name.startsWith("node-") ? "node" : name.replace("ready-", "");
        metrics.queue(queue, ref, r -> r.get() == null ? Double.NaN : r.get().getNumPending(),
                r -> r.get() == null ? Double.NaN : r.get().getNumAckPending());
    }

    private void startWorkers() {
        ConsumerKicks k = new ConsumerKicks(pullOrder.size());
        kicks = k;
        kickDispatcher = conn.nats().createDispatcher(m -> k.kicked(KickTarget.consumerIndex(m.getData(), conn.nodeId())));
        kickDispatcher.subscribe(ClusterLayout.KICK_SUBJECT);
        workers.add(Thread.ofPlatform().name("gosched-delay-pump").daemon(true)
                .start(() -> workerLoop("delay pump", delayed, BATCH, () -> true, this::pumpOne)));
        workers.add(Thread.ofPlatform().name("gosched-dead-letters").daemon(true)
                .start(() -> workerLoop("dead letters", dead, 16, deadLetters::ready, deadLetters::handle)));
        infoPoller.scheduleWithFixedDelay(this::refreshInfo, 0, 2, TimeUnit.SECONDS);
    }

    // ---------------------------------------------------------------- intake

    @Override
    public void enqueue(JobTicket ticket) {
        conn.check();
        boolean later = ticket.isDelayed(clock.instant().plus(DUE_SLACK));
        String subject = later ? ClusterLayout.delayedSubject(ticket) : ClusterLayout.runnableSubject(ticket);
        String id = later ? ClusterLayout.delayedMessageId(ticket) : ClusterLayout.messageId(ticket);
        publish(subject, ticket, id);
        if (!later) {
            kick(ticket);
        }
    }

    private void publish(String subject, JobTicket ticket, String messageId) {
        try {
            conn.jetStream().publish(subject, TicketMessages.headers(ticket), EMPTY,
                    PublishOptions.builder().messageId(messageId).expectedStream(ClusterLayout.JOBS_STREAM).build());
        } catch (JetStreamApiException e) {
            if (isFull(e)) {
                throw new BackendFullException("NATS at " + props.nats().url(), "the cluster's job queue is full"
                        + " (gosched.cluster.max-queue-bytes = " + props.maxQueueBytes() + ")", Duration.ofSeconds(5));
            }
            throw new IllegalStateException("NATS refused job ticket " + messageId + ": " + e.getMessage(), e);
        } catch (IOException | IllegalStateException e) {
            throw conn.translate("publish of job ticket " + messageId, e);
        }
    }

    /** nats-server's "maximum bytes/messages exceeded" and "insufficient resources" (errors.json). */
    static boolean isFull(JetStreamApiException e) {
        String m = String.valueOf(e.getMessage()).toLowerCase();
        return m.contains("maximum") && m.contains("exceeded") || e.getApiErrorCode() == 10047 || e.getApiErrorCode() == 10077;
    }

    /** Tells every node's puller that ticket is runnable, and on which consumer. */
    void kick(JobTicket ticket) {
        try {
            conn.nats().publish(ClusterLayout.KICK_SUBJECT, KickTarget.payload(ticket));
        } catch (IllegalStateException closed) {
            // pullers find the ticket on their next full scan
        }
    }

    @Override
    public void withdraw(JobTicket ticket) {
        if (!conn.isUp()) {
            return; // best effort: the ticket turns stale and is dropped when delivered
        }
        for (String subject : List.of(ClusterLayout.delayedSubject(ticket), ClusterLayout.runnableSubject(ticket))) {
            try {
                conn.management().purgeStream(ClusterLayout.JOBS_STREAM, PurgeOptions.subject(subject));
            } catch (IOException | JetStreamApiException e) {
                log.debug("withdraw of " + subject + " failed; the ticket turns stale instead", e);
            }
        }
    }

    // ---------------------------------------------------------------- pull

    @Override
    public List<JobLease> pull(int room, Duration maxWait) throws InterruptedException {
        if (room <= 0 || !running) {
            return List.of();
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            long seen = kicks.seen();
            List<JobLease> got = scan(room);
            if (!got.isEmpty() || !running) {
                return got;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return got;
            }
            kicks.awaitKick(seen, deadline, () -> running);
        }
    }

    /**
     * One pass over the pull order, asking the consumers that may hold tickets (all of them when
     * a full scan is due; see {@link ConsumerKicks}); takes at most {@code room} tickets.
     */
    private List<JobLease> scan(int room) throws InterruptedException {
        if (!conn.isUp()) {
            return List.of();
        }
        long start = System.nanoTime();
        boolean full = kicks.fullScan(start);
        List<JobLease> out = new ArrayList<>();
        for (int i = 0; i < Math.min(pullOrder.size(), pulledConsumers); i++) {
            int want = room - out.size();
            if (want <= 0) {
                break;
            }
            OptionalLong ask = kicks.ask(i, full);
            if (ask.isEmpty()) {
                continue; // found empty since its last kick
            }
            int[] fetched = {0};
            boolean answered = fetch(pullOrder.get(i), want, 0, m -> {
                fetched[0]++;
                NatsJobLease lease = lease(m);
                if (lease != null) {
                    out.add(lease);
                }
            });
            // Only a fetch the server answered says the consumer is empty: one that failed (a
            // request refused or timed out on a loaded server) leaves it named for the next scan
            // instead of hiding its tickets, behind lower priorities, until the next full scan.
            if (answered && fetched[0] < want) {
                kicks.foundEmpty(i, ask.getAsLong()); // a kick after it keeps the consumer named
            }
        }
        metrics.pulled(System.nanoTime() - start);
        return out;
    }

    /** How many consumers a scan would ask now without a full scan (for tests). */
    int namedConsumers() {
        return kicks.namedConsumers();
    }

    private NatsJobLease lease(Message m) {
        JobTicket t;
        try {
            t = TicketMessages.ticket(m.getHeaders());
        } catch (IllegalArgumentException e) {
            log.warn("dropping a message that is not a job ticket on " + m.getSubject() + ": " + e.getMessage());
            m.term();
            return null;
        }
        int delivery = (int) m.metaData().deliveredCount();
        if (delivery > 1) {
            metrics.redelivered();
        }
        return new NatsJobLease(m, t, delivery, conn, renewer, this::kick);
    }

    /** Message handler of {@link #fetch}. */
    private interface OnMessage {
        void accept(Message m) throws InterruptedException;
    }

    /**
     * Fetches up to {@code max} messages from {@code c}: without waiting when {@code waitMs} is 0,
     * else waiting up to {@code waitMs} for the first. A failure (NATS gone) ends the fetch early.
     *
     * @return whether the fetch ended as the server answered it (false after a failure)
     */
    private boolean fetch(ConsumerContext c, int max, long waitMs, OnMessage each) throws InterruptedException {
        FetchConsumeOptions opts = waitMs <= 0 ? FetchConsumeOptions.builder().maxMessages(max).noWait().build()
                : FetchConsumeOptions.builder().maxMessages(max).noWaitExpiresIn(waitMs).build();
        try (FetchConsumer fc = c.fetch(opts)) {
            Message m;
            while ((m = fc.nextMessage()) != null) {
                each.accept(m);
            }
            return true;
        } catch (IOException | JetStreamApiException | JetStreamStatusCheckedException | IllegalStateException e) {
            log.debug("fetch from " + c.getConsumerName() + " failed", e);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            log.debug("fetch from " + c.getConsumerName() + " ended", e);
        }
        return false;
    }

    // ---------------------------------------------------------------- delayed tickets

    /**
     * The loop of a background worker (the delay pump, the dead-letter worker): fetch from
     * {@code from} and handle each message while the queue is open. Executed only by the
     * worker's own platform thread; ends when the queue closes or the thread is interrupted.
     */
    private void workerLoop(String what, ConsumerContext from, int batch, java.util.function.BooleanSupplier ready, OnMessage each) {
        while (running) {
            try {
                if (!conn.isUp() || !ready.getAsBoolean()) {
                    pause(200);
                    continue;
                }
                fetch(from, batch, IDLE_WAIT_MS, each);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn(what + ": " + e.getMessage(), e);
                pause(500);
            }
        }
    }

    private void pumpOne(Message m) {
        JobTicket t;
        try {
            t = TicketMessages.ticket(m.getHeaders());
        } catch (IllegalArgumentException e) {
            log.warn("dropping a delayed message that is not a job ticket: " + e.getMessage());
            m.term();
            return;
        }
        Instant now = clock.instant();
        if (t.isDelayed(now.plus(DUE_SLACK))) {
            m.nakWithDelay(Duration.between(now, t.notBefore()));
            return;
        }
        try {
            publish(ClusterLayout.runnableSubject(t), t, ClusterLayout.messageId(t));
        } catch (RuntimeException e) {
            // full or unreachable: keep it delayed and try again shortly
            m.nakWithDelay(Duration.ofSeconds(1));
            return;
        }
        m.ack(); // a crash before this ack re-publishes after the ack wait, deduplicated by message id
        kick(t);
    }

    // ---------------------------------------------------------------- dead letters

    @Override
    public void onLost(LostHandler handler) {
        deadLetters.onLost(handler);
    }

    // ---------------------------------------------------------------- stats

    private void refreshInfo() {
        if (!conn.isUp()) {
            return;
        }
        for (ConsumerContext c : pullOrderAndDelayed()) {
            try {
                info.get(c.getConsumerName()).set(c.getConsumerInfo());
            } catch (IOException | JetStreamApiException | RuntimeException e) {
                log.debug("consumer info of " + c.getConsumerName() + " unavailable", e);
            }
        }
    }

    private List<ConsumerContext> pullOrderAndDelayed() {
        List<ConsumerContext> all = new ArrayList<>(pullOrder);
        all.add(delayed);
        return all;
    }

    /** Waiting tickets: not yet handed out by a runnable consumer, plus every delayed one. */
    @Override
    public long depth() {
        long n = 0;
        for (Map.Entry<String, AtomicReference<ConsumerInfo>> e : info.entrySet()) {
            ConsumerInfo ci = e.getValue().get();
            if (ci == null) {
                continue;
            }
            n += ci.getNumPending();
            if (e.getKey().equals(ClusterLayout.DELAYED_CONSUMER)) {
                n += ci.getNumAckPending();
            }
        }
        return n;
    }

    /** Refreshes the consumer infos now (tests; the poller does it every two seconds). */
    public void refreshStats() {
        refreshInfo();
    }

    /** True while NATS is reachable. */
    public boolean isAvailable() {
        return conn.isUp();
    }

    @Override
    public Duration leaseTime() {
        return props.ackWait();
    }

    /** A stream info with a subject filter per kind of subject: in a work queue an unacked ticket stays in the stream. */
    @Override
    public boolean holdsTicketOf(String jobId) {
        conn.check();
        try {
            for (String filter : ClusterLayout.jobTicketFilters(jobId)) {
                List<io.nats.client.api.Subject> found = conn.management()
                        .getStreamInfo(ClusterLayout.JOBS_STREAM, StreamInfoOptions.filterSubjects(filter)).getStreamState().getSubjects();
                if (found != null && !found.isEmpty()) {
                    return true;
                }
            }
            return false;
        } catch (IOException | JetStreamApiException | IllegalStateException e) {
            throw conn.translate("look-up of the tickets of job " + jobId, e);
        }
    }

    /** Leases this node holds open. */
    public int openLeases() {
        return renewer.openLeases();
    }

    /** In-progress acks sent so far. */
    public long renewals() {
        return renewer.renewals();
    }

    /**
     * Stops renewing {@code lease} without ending it, as a node that died would: the server
     * hands the ticket out again after the ack wait. For tests of takeover and for a node that
     * abandons its work on a hard stop.
     */
    public void abandon(JobLease lease) {
        ((NatsJobLease) lease).abandon();
    }

    @Override
    public void close() {
        running = false;
        if (kicks != null) {
            kicks.wakeAll();
        }
        infoPoller.shutdownNow();
        renewer.close();
        if (kickDispatcher != null) {
            try {
                conn.nats().closeDispatcher(kickDispatcher);
            } catch (RuntimeException e) {
                // connection already closed
            }
        }
        for (Thread t : workers) {
            try {
                t.join(IDLE_WAIT_MS * 3);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }


    /** A pause of the background loops; an interrupt is kept, and ends the loop at its next fetch. */
    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
