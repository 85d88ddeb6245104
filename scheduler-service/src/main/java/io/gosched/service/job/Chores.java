package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;

import io.gosched.service.ServiceProperties;
import io.gosched.service.error.BackendException;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.workload.Run;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * What the node does in the background, on one platform thread ({@code gosched-job-chores}): the
 * live counters of its running attempts published, and, over a shared store, the repairs of
 * states nobody else would repair (claims whose compare-and-set got no answer, records left
 * running with nobody to run them), the leader's retention and the forgetting of stale progress.
 */
final class Chores {

    private static final Log log = LogFactory.getLog(Chores.class);
    private static final String THREAD = "gosched-job-chores";
    private static final long PROGRESS_EVERY_MS = 250;
    /** Over a store in this process progress costs a callback, not a message; SSE shows counters as often as it did when it polled. */
    private static final long LOCAL_PROGRESS_EVERY_MS = 100;
    private static final long RETENTION_EVERY_MS = 5_000;
    /** How often claims that got no answer are read again (see {@link #unsettled}). */
    private static final long SETTLE_EVERY_MS = 500;
    /**
     * How long a claim that read as not landed is still watched. The client keeps what it could
     * not send while the connection was down and sends it after the reconnect, so the
     * compare-and-set of a claim that timed out may land after a first read found the record queued.
     */
    private static final long SETTLE_GRACE_NANOS = Duration.ofSeconds(10).toNanos();
    /**
     * How many lease times a record must stay orphaned, with no ticket of its job in the queue,
     * before the sweep requeues it: a margin for what is in flight between the store and the
     * queue when the sweep reads them (a takeover's compare-and-set, a retry's publish).
     */
    private static final int ORPHAN_LEASES = 2;

    /**
     * At most this many queue look-ups ({@link JobQueue#holdsTicketOf}) per sweep of queued jobs
     * without a ticket. Over NATS each is a stream query; after a flood thousands of jobs stay
     * queued for lease times with their tickets in the queue, and looking every one up each round
     * loaded the server the whole cluster runs on. The rest wait for the next rounds (a record
     * looked up waits another {@link #ORPHAN_LEASES} lease times, so every one gets its turn).
     */
    private static final int TICKET_LOOKUPS_PER_SWEEP = 32;
    private static final long NOT_CLEAR = Long.MIN_VALUE;

    /**
     * A claim in {@link #unsettled}; {@code requeued} once its record is back to queued under
     * {@code ticket.next}; {@code clearSince} (System.nanoTime, or {@link #NOT_CLEAR}) since when
     * the record has read as nothing to settle.
     */
    private record Unsettled(JobTicket ticket, boolean requeued, long clearSince) {}

    /** A running record as the sweep saw it first: a change of node, ticket or attempt is a new sighting. */
    private record Orphan(String node, long ticket, int attempt, long sinceNanos) {}

    /** A queued record as {@link #sweepUnticketed} saw it first: a change of ticket or queue time is a new sighting. */
    private record Unticketed(long ticket, Instant queuedAt, long sinceNanos) {}

    private final HeldJobs held;
    private final JobStore store;
    private final JobQueue queue;
    private final JobNode node;
    private final Clock clock;
    private final ServiceMetrics metrics;
    private final Pinning pinning;
    private final ServiceProperties.Retention retention;
    private final ScheduledExecutorService thread;
    /**
     * Claims whose compare-and-set got no answer (the store went away mid-write), by job id: it may
     * have landed, leaving the record {@code running} on this node under a ticket this node handed
     * back. Nobody else repairs such a record: a server restart can forget that the ticket was ever
     * delivered, and the node that gets it next as a first delivery takes it for a duplicate of a
     * run in progress and drops it. {@link #settleClaims} reads each again once the store answers
     * and puts a landed one back in the queue. Also holds the orphans the sweep requeued whose
     * ticket the queue refused ({@link #requeueOrphan}). Bounded by the running slots (an
     * unanswered claim stands for a lease pulled into one) plus those orphans.
     */
    private final ConcurrentHashMap<String, Unsettled> unsettled = new ConcurrentHashMap<>();
    /**
     * Records the orphan sweep found {@code running} with nobody to run them, by job id, as first
     * seen so. Touched only by the chores thread.
     */
    private final Map<String, Orphan> orphans = new HashMap<>();
    /** Records {@link #sweepUnticketed} found queued with no ticket, by job id, as first seen so. Touched only by the chores thread. */
    private final Map<String, Unticketed> unticketed = new HashMap<>();

    Chores(HeldJobs held, JobStore store, JobQueue queue, JobNode node, Clock clock, ServiceMetrics metrics, Pinning pinning,
            ServiceProperties.Retention retention) {
        this.held = held;
        this.store = store;
        this.queue = queue;
        this.node = node;
        this.clock = clock;
        this.metrics = metrics;
        this.pinning = pinning;
        this.retention = retention;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name(THREAD).daemon(true).unstarted(r));
    }

    /** Schedules the chores; {@code forgetStaleProgress} is the views', run with the repairs over a shared store. */
    void start(Runnable forgetStaleProgress) {
        boolean shared = store.isShared();
        long every = shared ? PROGRESS_EVERY_MS : LOCAL_PROGRESS_EVERY_MS;
        thread.scheduleWithFixedDelay(this::publishProgress, every, every, TimeUnit.MILLISECONDS);
        if (shared) { // a store in this process keeps its bounds as jobs finish, and loses no state to repair
            thread.scheduleWithFixedDelay(this::retention, RETENTION_EVERY_MS, RETENTION_EVERY_MS, TimeUnit.MILLISECONDS);
            thread.scheduleWithFixedDelay(forgetStaleProgress, RETENTION_EVERY_MS, RETENTION_EVERY_MS, TimeUnit.MILLISECONDS);
            thread.scheduleWithFixedDelay(this::settleClaims, SETTLE_EVERY_MS, SETTLE_EVERY_MS, TimeUnit.MILLISECONDS);
            long sweep = Math.max(1000, queue.leaseTime().toMillis() / 2);
            thread.scheduleWithFixedDelay(this::sweepOrphans, sweep, sweep, TimeUnit.MILLISECONDS);
            thread.scheduleWithFixedDelay(this::sweepUnticketed, sweep, sweep, TimeUnit.MILLISECONDS);
        }
    }

    /** A claim's compare-and-set got no answer: {@link #settleClaims} finds out whether it landed. */
    void claimUnanswered(JobTicket ticket) {
        unsettled.put(ticket.jobId(), new Unsettled(ticket, false, NOT_CLEAR));
    }

    void close() {
        thread.shutdownNow();
    }

    private static boolean onChoresThread() {
        return Thread.currentThread().getName().equals(THREAD);
    }

    /**
     * Settles the claims whose compare-and-set got no answer ({@link #unsettled}). Executed only by the chores thread. A record still
     * {@code running} on this node under the claim's ticket, and not held here, is a claim that
     * landed and never ran: it goes back to {@code queued} under the next ticket, its attempt not
     * counted (or to {@code cancelled} if a DELETE came meanwhile), and that ticket is published;
     * whatever is left of the old ticket turns stale. Any other record (queued: the CAS did not
     * land, yet; taken over; finished) needs nothing; such an entry is read again for
     * {@link #SETTLE_GRACE_NANOS}, in case the CAS lands late.
     */
    private void settleClaims() {
        assert onChoresThread();
        for (Map.Entry<String, Unsettled> e : unsettled.entrySet()) {
            String id = e.getKey();
            Unsettled u = e.getValue();
            try {
                if (u.requeued()) {
                    queue.enqueue(u.ticket().next(clock.instant())); // deduplicated by message id when retried
                    unsettled.remove(id, u);
                } else if (putBack(id, r -> landedUnrun(r, u.ticket()), JobRecord.Status::unclaimed, r -> u.ticket(),
                        "unanswered-claim") instanceof JobRecord.Status back) {
                    if (back.state() == JobState.QUEUED) {
                        log.info("job " + id + ": the claim of ticket " + u.ticket().number() + " landed unseen and never ran;"
                                + " queued again as ticket " + back.ticket());
                    }
                    unsettled.remove(id, u); // its next ticket is out, or back in this map for the next round
                } else {
                    long read = System.nanoTime();
                    if (u.clearSince() == NOT_CLEAR) {
                        unsettled.replace(id, u, new Unsettled(u.ticket(), false, read));
                    } else if (read - u.clearSince() > SETTLE_GRACE_NANOS) {
                        unsettled.remove(id, u);
                    }
                }
            } catch (BackendException unreachable) {
                // still away: the next round tries again
            } catch (RuntimeException ex) {
                log.warn("job " + id + ": settling the claim of ticket " + u.ticket().number() + " failed; trying again", ex);
            }
        }
    }

    /**
     * The orphan sweep: finds the records left {@code running} with nobody to run them and no
     * ticket to bring them back, and puts them back in the queue. Such a record comes from a
     * server restarted after a kill, which forgets recent deliveries (docs/cluster.md, "A claim
     * that got no answer"): a first delivery of the ticket of a running job is dropped as a
     * duplicate of the run, and if the runner then dies, or restarts under the same id, nothing
     * else ever moves the record. Every node looks at the records running under its own id that
     * it does not hold (a restart); the leader also at those of nodes that are not present. A
     * record seen so, unchanged, for {@link #ORPHAN_LEASES} lease times, whose job has no ticket
     * in the queue ({@link JobQueue#holdsTicketOf}: a ticket still there comes back by itself,
     * to a takeover or, after max-deliver deliveries, to the dead letter), goes back to
     * {@code queued} under the next ticket (the lost attempt counts, as a takeover's does;
     * {@code cancelled} if a DELETE came meanwhile) and the ticket is published. Executed only
     * by the chores thread.
     */
    private void sweepOrphans() {
        assert onChoresThread();
        long now = System.nanoTime();
        long after = ORPHAN_LEASES * queue.leaseTime().toNanos();
        boolean leader = node.isLeader();
        Map<String, Boolean> present = new HashMap<>();
        Set<String> seen = new HashSet<>();
        try {
            for (Versioned<JobRecord> v : store.list()) {
                JobRecord.Status s = v.value().status();
                String id = v.value().id();
                if (s.state() != JobState.RUNNING || s.node() == null
                        || (node.id().equals(s.node()) ? held.holds(id) : !leader || present.computeIfAbsent(s.node(), node::isPresent))) {
                    continue;
                }
                seen.add(id);
                Orphan o = orphans.get(id);
                if (o == null || !o.node().equals(s.node()) || o.ticket() != s.ticket() || o.attempt() != s.attempt()) {
                    orphans.put(id, new Orphan(s.node(), s.ticket(), s.attempt(), now));
                } else if (now - o.sinceNanos() >= after) {
                    if (queue.holdsTicketOf(id)) {
                        orphans.put(id, new Orphan(s.node(), s.ticket(), s.attempt(), now)); // it comes back by itself; look again later
                    } else {
                        requeueOrphan(id, o);
                        seen.remove(id);
                    }
                }
            }
            orphans.keySet().retainAll(seen);
        } catch (BackendException unreachable) {
            orphans.clear(); // nothing was watched meanwhile: every sighting starts again
        } catch (RuntimeException e) {
            log.warn("orphan sweep failed; it runs again shortly", e);
        }
    }

    /**
     * The sweep of queued records with no ticket, on the leader: a writer that moved a record to
     * {@code queued} and died before it enqueued the ticket (a waiting job's release by
     * {@link Dependencies}, where only the CAS winner enqueues; a submission or an automatic retry
     * likewise) leaves a job nothing would ever run. A record seen queued, under the same ticket
     * and queue time, for {@link #ORPHAN_LEASES} lease times, whose job has no ticket in the queue,
     * gets its ticket enqueued again: the same number, so a ticket that was only late is one
     * ticket (the queue deduplicates it), or a stale one the claim protocol drops. Executed only
     * by the chores thread.
     */
    private void sweepUnticketed() {
        assert onChoresThread();
        if (!node.isLeader()) {
            unticketed.clear();
            return;
        }
        long now = System.nanoTime();
        long after = ORPHAN_LEASES * queue.leaseTime().toNanos();
        Set<String> seen = new HashSet<>();
        int lookups = 0;
        try {
            for (Versioned<JobRecord> v : store.list()) {
                JobRecord.Status s = v.value().status();
                String id = v.value().id();
                if (s.state() != JobState.QUEUED) {
                    continue;
                }
                seen.add(id);
                Unticketed u = unticketed.get(id);
                if (u == null || u.ticket() != s.ticket() || !java.util.Objects.equals(u.queuedAt(), s.queuedAt())) {
                    unticketed.put(id, new Unticketed(s.ticket(), s.queuedAt(), now));
                } else if (now - u.sinceNanos() >= after && lookups++ < TICKET_LOOKUPS_PER_SWEEP) {
                    unticketed.put(id, new Unticketed(s.ticket(), s.queuedAt(), now)); // look again after as long
                    if (!queue.holdsTicketOf(id)) {
                        Optional<Versioned<JobRecord>> r = store.get(id);
                        if (r.isPresent() && r.get().value().status().state() == JobState.QUEUED && r.get().value().status().ticket() == s.ticket()) {
                            JobRecord rec = r.get().value();
                            queue.enqueue(new JobTicket(id, s.ticket(), rec.spec().priority(), rec.spec().notBefore(), pinning.pinQuietly(rec)));
                            metrics.jobRequeued("unticketed");
                            log.warn("job " + id + ": queued with no ticket in the queue for " + ORPHAN_LEASES
                                    + " lease times (its writer died before it enqueued it); ticket " + s.ticket() + " enqueued again");
                        }
                    }
                }
            }
            unticketed.keySet().retainAll(seen);
        } catch (BackendException unreachable) {
            unticketed.clear();
        } catch (RuntimeException e) {
            log.warn("sweep of queued jobs without a ticket failed; it runs again shortly", e);
        }
    }

    /** Moves an orphaned record (as {@code o} saw it) back to the queue and publishes its next ticket. */
    private void requeueOrphan(String id, Orphan o) {
        JobRecord.Status back = putBack(id, r -> {
            JobRecord.Status s = r.status();
            return s.state() == JobState.RUNNING && o.node().equals(s.node()) && s.ticket() == o.ticket() && s.attempt() == o.attempt()
                    && !(node.id().equals(s.node()) && held.holds(id));
        }, (s, at) -> s.requeued(at, JobRecord.Counters.ZERO, null, null, false),
                r -> new JobTicket(id, o.ticket(), r.spec().priority(), null, pinning.pinQuietly(r)), "orphan");
        if (back != null && back.state() == JobState.QUEUED) {
            log.warn("job " + id + ": left running by node " + o.node() + " with no lease on it for " + ORPHAN_LEASES
                    + " lease times; queued again as ticket " + back.ticket());
        }
    }

    /**
     * The end both repairs of a lost state share ({@link #settleClaims}, {@link #requeueOrphan}):
     * a CAS of a record that nobody runs, while {@code stranded} still holds, to {@code cancelled}
     * if a DELETE came meanwhile, else to what {@code back} makes of its status (queued under
     * the next ticket), counted; then the ticket after {@code old} is published. One the queue
     * refuses goes into {@link #unsettled}, where settleClaims publishes it once the queue
     * answers. Returns the record's new status, or null if it needed nothing.
     */
    private JobRecord.Status putBack(String id, Predicate<JobRecord> stranded, BiFunction<JobRecord.Status, Instant, JobRecord.Status> back,
            Function<JobRecord, JobTicket> old, String cause) {
        Instant at = clock.instant();
        JobStore.Update u = store.update(id, r -> !stranded.test(r) ? null
                : r.withStatus(r.status().cancelRequested() ? r.status().finished(JobState.CANCELLED, at, JobRecord.Counters.ZERO, null, null)
                        : back.apply(r.status(), at)));
        if (!u.applied()) {
            return null;
        }
        JobRecord r = u.current().value();
        if (r.status().state() != JobState.QUEUED) {
            metrics.jobFinished(JobType.of(r.spec()), r.status().state().json(), Duration.ZERO);
            return r.status();
        }
        metrics.jobRequeued(cause);
        JobTicket previous = old.apply(r);
        try {
            queue.enqueue(previous.next(at));
        } catch (BackendException unreachable) {
            unsettled.put(id, new Unsettled(previous, true, NOT_CLEAR));
        }
        return r.status();
    }

    /** True if {@code r} stands for a claim of ticket {@code t} by this node that this node does not run. */
    private boolean landedUnrun(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        if (s.state() != JobState.RUNNING || !node.id().equals(s.node()) || s.ticket() != t.number()) {
            return false;
        }
        HeldJob mine = held.get(r.id());
        return mine == null || mine.ticket != t.number(); // held: taken again under a later delivery
    }

    /**
     * Sends the live counters and progress report of the attempts running here that moved since
     * the last round: at most one message per attempt per round, whatever an attempt reports in
     * between (the last report of the round wins). Executed only by the chores thread.
     */
    private void publishProgress() {
        assert onChoresThread();
        for (HeldJob l : held.all()) {
            Run r = l.run;
            if (r == null) {
                continue;
            }
            JobRecord.Counters c = new JobRecord.Counters(r.goroutinesSpawned(), r.messagesSent(), r.messagesReceived(), r.stepsRun());
            JobRecord.Report report = r.report();
            // A report is compared by identity: each one is a new object, and reports between two rounds coalesce into the last.
            if (!c.equals(l.lastPublished) || report != l.lastReport) {
                l.lastPublished = c;
                l.lastReport = report;
                try {
                    store.publishProgress(new JobStore.Progress(l.id, l.attempt, c, r.liveGoroutines(), report));
                } catch (RuntimeException e) {
                    log.debug("progress of " + l.id + " dropped", e);
                }
            }
        }
    }

    /** Retention over a shared store, on the leader only: a store in this process keeps its own bounds as jobs finish. */
    private void retention() {
        if (!node.isLeader()) {
            return;
        }
        try {
            int n = store.evict(retention.maxFinishedJobs(), clock.instant().minus(retention.maxAge()));
            metrics.jobsEvicted("retention", n);
        } catch (RuntimeException e) {
            log.debug("retention skipped this round", e);
        }
    }
}
