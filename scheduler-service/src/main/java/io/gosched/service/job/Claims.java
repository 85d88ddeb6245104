package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.gosched.service.error.BackendException;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The claim (protocol step 2, {@code io.gosched.service.job.spi}), in its two halves. First, a
 * pulled lease's record is read ({@link #pulled}): a stale ticket is dropped, a runnable one
 * becomes a {@link HeldJob} that waits on this node for room, its record still {@code queued}.
 * Then, once it fits, the compare-and-set moves the record to {@code running} on this node as its
 * next attempt ({@link #claim}). Over a shared store the reads and claims of one pulled batch go
 * out side by side, a virtual thread each: each is a round trip to NATS, and one after another on
 * the dispatcher they bounded a node's completions (bench/results/NOTES.md, "cluster
 * completions": with both, one node's completions under a flood went from 260 to 1,307 a second).
 * A job this node accepted over a shared store is not read at all: its first claim starts from
 * the record as created here ({@link CreatedHere}), and its compare-and-set on that revision
 * catches any write since.
 *
 * <p>Thread-safe: the dispatcher and, in place, finishing goroutines call it; a held job is
 * claimed by one of them.
 */
final class Claims {

    private static final Log log = LogFactory.getLog(Claims.class);
    /** How long a pulled ticket of a manual retry waits for the retry's compare-and-set to land before it counts as stale. */
    private static final Duration RETRY_IN_FLIGHT = Duration.ofSeconds(2);
    /**
     * When a pulled ticket's record reads as absent in a cluster, how long the ticket waits before it
     * is read again: a replica catching up applies a creation within milliseconds, a failover within
     * a second or two, and each wait spends one of the ticket's max-deliver deliveries.
     */
    private static final Duration ABSENT_RECORD_RECHECK = Duration.ofMillis(500);
    /**
     * How long a handler job this node passed on waits before its next ticket is handed out, while
     * a present node has the handler: this node may take the ticket again (a pull hands out what
     * is ready, to whoever has room), and the wait bounds how often it does, not how soon a node
     * with the handler gets it (its pulls are not delayed).
     */
    static final Duration PASS_ON_ELSEWHERE = Duration.ofSeconds(1);
    /**
     * The same while no present node has the handler: the job waits for one to join, and each
     * node without it looks at it again this often (a compare-and-set and a publish each time).
     */
    static final Duration PASS_ON_NOWHERE = Duration.ofSeconds(5);
    /**
     * The first wait of a ticket handed back because the store or the queue did not answer its
     * claim; it doubles with each delivery, up to the lease time. A stream between two leaders
     * (a NATS server died, or its leader stepped down) answers "no responders" at once, for a
     * second or more: handed back without a wait, a ticket went through its max-deliver
     * deliveries within milliseconds and its accepted job failed as {@code lost} (seen in the
     * NATS fault test). With the waits, five deliveries span 1 + 2 + 4 + 8 s (lease time 30 s).
     */
    static final Duration UNANSWERED_FIRST_WAIT = Duration.ofSeconds(1);

    /** What reading a pulled lease's record decided. */
    sealed interface Pulled {
        /** Runnable: it waits on this node for room, held. */
        record Held(HeldJob job) implements Pulled {}

        /** In place: its claim must wait (a manual retry's compare-and-set in flight), which sleeps: the dispatcher's. */
        record HandOver() implements Pulled {}

        /** Nothing to hold: the lease was completed (stale), released, or taken by the job already held. */
        record Done() implements Pulled {}
    }

    private static final Pulled HAND_OVER = new Pulled.HandOver();
    private static final Pulled DONE = new Pulled.Done();

    /** A record read for a pulled lease, side by side with its batch's: what the store answered, or its failure. */
    sealed interface Read {
        record Got(Optional<Versioned<JobRecord>> record) implements Read {}

        record Failed(BackendException failure) implements Read {}
    }

    private final HeldJobs held;
    private final JobStore store;
    private final JobQueue queue;
    private final JobNode node;
    private final Clock clock;
    private final JobSpecs specs;
    private final JobMemory memory;
    private final Chores chores;
    /** Over a shared store: the reads and claims of a batch, a virtual thread each; null over a store in this process. */
    private final ExecutorService sideBySide;
    /** The store lives in this process: it charges each record's request itself, and a record is never read before it exists. */
    private final boolean storeHere;
    /** Over a shared store: the records created here, which a claim here starts from instead of reading them back. */
    private final CreatedHere createdHere;

    Claims(HeldJobs held, JobStore store, JobQueue queue, JobNode node, Clock clock, JobSpecs specs, JobMemory memory, Chores chores,
            CreatedHere createdHere) {
        this.createdHere = createdHere;
        this.held = held;
        this.store = store;
        this.queue = queue;
        this.node = node;
        this.clock = clock;
        this.specs = specs;
        this.memory = memory;
        this.chores = chores;
        this.storeHere = !store.isShared();
        this.sideBySide = storeHere ? null : Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("gosched-job-batch-", 0).factory());
    }

    /** True if a batch's reads and claims go out side by side (over a shared store). */
    boolean sideBySide() {
        return sideBySide != null;
    }

    /**
     * The records of a pulled batch, read side by side, by job id; empty (each is read by
     * {@link #pulled} itself) over a store in this process or for a batch of one.
     */
    Map<String, Read> readTogether(List<JobLease> leases) {
        if (sideBySide == null || leases.size() < 2) {
            return Map.of();
        }
        Map<String, Future<Optional<Versioned<JobRecord>>>> reads = new LinkedHashMap<>();
        Map<String, Read> out = new HashMap<>();
        for (JobLease lease : leases) {
            String id = lease.ticket().jobId();
            Versioned<JobRecord> mine = createdCopy(lease.ticket());
            if (mine != null) {
                out.put(id, new Read.Got(Optional.of(mine)));
            } else if (!out.containsKey(id)) {
                reads.putIfAbsent(id, sideBySide.submit(() -> store.get(id)));
            }
        }
        boolean interrupted = false;
        for (var e : reads.entrySet()) {
            while (true) {
                try {
                    out.put(e.getKey(), new Read.Got(e.getValue().get()));
                    break;
                } catch (InterruptedException ie) {
                    interrupted = true; // a read ends on its own (the request has a timeout): wait it out
                } catch (ExecutionException ee) {
                    if (ee.getCause() instanceof BackendException be) {
                        out.put(e.getKey(), new Read.Failed(be));
                    } // else: not read here; pulled() reads it itself
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    /**
     * Claim, first half: reads the record of a pulled lease and drops a stale ticket; a runnable
     * one is held, to wait on this node for room.
     *
     * @param inPlace  the caller is a finishing goroutine: a claim that must wait is handed over, not waited for
     * @param read     the record as {@link #readTogether} read it (or its failure), or null to read it here
     */
    Pulled pulled(JobLease lease, boolean inPlace, Read read) {
        JobTicket t = lease.ticket();
        HeldJob mine = held.get(t.jobId());
        if (mine != null && mine.ticket == t.number()) {
            // our own lease lapsed (NATS was away) and came back to us: keep running under the new one
            JobLease old = mine.lease;
            mine.lease = lease;
            old.abandon();
            return DONE;
        }
        Optional<Versioned<JobRecord>> cur;
        try {
            cur = switch (read) {
                case Read.Got got -> got.record();
                case Read.Failed failed -> throw failed.failure();
                // A store in this process with the spec at hand: the status is all the claim reads, and that
                // store keeps the request it was created with whatever a compare-and-set writes (never so in a cluster).
                case null -> {
                    if (specs.holds(t.jobId())) {
                        yield store.summary(t.jobId());
                    }
                    Versioned<JobRecord> asCreated = createdCopy(t);
                    yield asCreated != null ? Optional.of(asCreated) : store.get(t.jobId());
                }
            };
        } catch (BackendException e) {
            releaseUnanswered(lease);
            return DONE;
        }
        if (cur.isPresent() && orphanedRetry(cur.get().value(), t)) {
            // the runner of ticket n died between its compare-and-set to queued(n + 1) and the publish of n + 1:
            // publish it now (deduplicated by message id if it did go out), then drop ticket n
            JobRecord q = cur.get().value();
            try {
                queue.enqueue(t.next(q.status().queuedAt().plusMillis(specs.parse(q.spec())
                        .retry().backoffBefore(q.status().attempt() + 1))));
            } catch (BackendException e) {
                releaseUnanswered(lease);
                return DONE;
            }
            Leases.complete(lease);
            return DONE;
        }
        if (inPlace && cur.isPresent() && retryInFlight(cur.get().value(), t)) {
            return HAND_OVER; // the wait below sleeps: not on a goroutine
        }
        long end = System.nanoTime() + RETRY_IN_FLIGHT.toNanos();
        while (cur.isPresent() && retryInFlight(cur.get().value(), t) && System.nanoTime() - end < 0) {
            // POST /retry publishes ticket n + 1 before its compare-and-set moves the record to it: wait for it
            // rather than drop the one ticket the job will have
            Leases.pause(Duration.ofMillis(5));
            try {
                cur = store.get(t.jobId());
            } catch (BackendException e) {
                releaseUnanswered(lease);
                return DONE;
            }
        }
        if (cur.isEmpty() && !storeHere) {
            // A ticket is published only after its record was created, so in a cluster an absent
            // record is a read from a replica that has not applied the creation yet (KV reads are
            // direct gets, answered by any replica). Dropping the ticket would leave the job queued
            // for ever; it comes back after the recheck, and a record that never appears makes it a
            // dead letter after max-deliver deliveries, like any ticket nobody can finish.
            Leases.release(lease, ABSENT_RECORD_RECHECK);
            return DONE;
        }
        if (cur.isEmpty() || unclaimable(cur.get().value(), lease)) {
            specs.forget(t.jobId());
            createdHere.forget(t.jobId());
            Leases.complete(lease);
            return DONE;
        }
        JobRecord r = cur.get().value();
        if (!specs.runsHere(r.spec())) {
            return passOn(lease, cur.get());
        }
        CreatedHere.Copy copy = createdHere.take(r.id());
        JobSpec spec;
        try {
            JobSpec known = specs.take(r.id());
            if (known == null && copy != null && copy.record().revision() == cur.get().revision()) {
                known = copy.spec(); // parsed at submission, this node's handlers binding its arguments
            }
            spec = known != null ? known : specs.parseToRun(r.spec());
        } catch (RuntimeException unparsable) {
            // A handler job accepted on a node without the handler: this node's handler is the first to read its
            // arguments. Otherwise a node with other limits accepted it. Either way it can never run here, nor,
            // with the same handlers and limits, anywhere.
            String why = r.spec().handler() != null
                    ? "handler '" + r.spec().handler() + "' on node " + node.id() + " refused the job's arguments: "
                    : "node " + node.id() + " cannot parse the job with its gosched.api.limits: ";
            Instant now = clock.instant();
            store.update(r.id(), x -> stale(x, t) ? null : x.withStatus(x.status().claimed(node.id(), now).finished(JobState.FAILED, now,
                    JobRecord.Counters.ZERO, null, new JobRecord.Failure(JobRecord.Failure.REFUSED, "", why + unparsable.getMessage()))));
            Leases.complete(lease);
            return DONE;
        }
        // A store in this process charges the record's request already; this node adds only the run.
        HeldJob l = new HeldJob(t.jobId(), spec, r.spec(), t.number(), lease, storeHere ? memory.admitRun(spec) : memory.admitClaimed(spec));
        l.read = cur.get();
        l.results = results(spec);
        held.put(l);
        return new Pulled.Held(l);
    }

    /**
     * The record of a first ticket's job as this node created it, when it keeps that copy
     * ({@link CreatedHere}): the claim starts from it without a read. Its compare-and-set is on
     * the copy's revision, so a record written since fails it and is read then. Null for any other
     * ticket (a retry's or a pass's: the record has moved past its creation) or without a copy.
     */
    private Versioned<JobRecord> createdCopy(JobTicket t) {
        CreatedHere.Copy c = createdHere.peek(t.jobId());
        return c == null || c.record().value().status().ticket() != t.number() ? null : c.record();
    }

    /**
     * A handler job whose handler this node lacks is left to the nodes that have it. Not with a
     * nak: every delivery of a ticket counts toward max-deliver, and a job that waits for its
     * handler to be deployed would become a dead letter after a few passes. As a retry does
     * (protocol step 5), the record moves to the next ticket first ({@link JobRecord.Status#passedOn}:
     * no attempt counted), that ticket is published due a little later
     * ({@link #PASS_ON_ELSEWHERE}, or {@link #PASS_ON_NOWHERE} while no present node has the
     * handler), and this one is acked: each pass is a fresh ticket, so passes never burn
     * deliveries, and the wait keeps an idle node from taking the job again and again. A node that
     * dies between the compare-and-set and the publish leaves the record queued with no ticket: the
     * leader's sweep for unticketed jobs publishes it again (the net dependencies use too).
     */
    private Pulled passOn(JobLease lease, Versioned<JobRecord> read) {
        JobTicket t = lease.ticket();
        String handler = read.value().spec().handler();
        specs.forget(t.jobId());
        createdHere.forget(t.jobId());
        Duration wait = node.hasHandlerSomewhere(handler) ? PASS_ON_ELSEWHERE : PASS_ON_NOWHERE;
        Instant now = clock.instant();
        JobStore.Update u;
        try {
            u = store.update(t.jobId(), read, x -> unclaimable(x, lease) ? null : x.withStatus(x.status().passedOn(now)));
        } catch (BackendException e) {
            Leases.release(lease, wait);
            return DONE;
        }
        if (u.applied()) {
            try {
                queue.enqueue(t.next(now.plus(wait)));
            } catch (BackendException e) {
                log.debug("job " + t.jobId() + ": the ticket passing it on was not published; the sweep for unticketed jobs will", e);
            }
        }
        Leases.complete(lease); // stale if not applied: the record moved on meanwhile
        return DONE;
    }

    /**
     * The results its {@code result} steps take, read now from the jobs it waited for (they
     * succeeded before it was queued, so their results are final): job id to its
     * {@code lastReceived}, a JSON null when it received nothing. A job removed since (retention)
     * is left out, and the step that names it fails.
     */
    private java.util.Map<String, tools.jackson.databind.JsonNode> results(JobSpec spec) {
        if (spec.workload().results().isEmpty()) {
            return java.util.Map.of();
        }
        java.util.Map<String, tools.jackson.databind.JsonNode> out = new java.util.HashMap<>();
        for (String id : spec.workload().results().keySet()) {
            store.summary(id).ifPresent(v -> out.put(id, v.value().status().lastReceived() == null
                    ? tools.jackson.databind.node.NullNode.getInstance() : v.value().status().lastReceived()));
        }
        return out;
    }

    /**
     * Claim, second half: the compare-and-set {@code queued -> running(this node, attempt + 1)}
     * (or a takeover of a lapsed lease's run). Executed by whoever picked the job (it is CLAIMING).
     *
     * @return true if it landed (the job runs, or runs cancelled if it was abandoned meanwhile); false if the job was
     *         dropped (its record moved on) or abandoned (no answer: its ticket went back)
     */
    /** Hands back a ticket the store or the queue did not answer for, after {@link #unansweredWait}. */
    private void releaseUnanswered(JobLease lease) {
        Leases.release(lease, unansweredWait(lease.delivery(), queue.leaseTime()));
    }

    /** {@link #UNANSWERED_FIRST_WAIT}, doubled for each delivery after the first, at most {@code leaseTime}. */
    static Duration unansweredWait(int delivery, Duration leaseTime) {
        long ms = UNANSWERED_FIRST_WAIT.toMillis() << Math.min(20, Math.max(0, delivery - 1));
        return Duration.ofMillis(Math.min(ms, leaseTime.toMillis()));
    }

    boolean claim(HeldJob l) {
        Instant now = clock.instant();
        JobLease lease = l.lease;
        JobStore.Update u;
        try {
            u = store.update(l.id, l.read, x -> unclaimable(x, lease) ? null : x.withStatus(x.status().claimed(node.id(), now)));
        } catch (RuntimeException e) {
            // NATS went away mid-claim: the compare-and-set may have landed or not. Hand the ticket back; its
            // next delivery claims a queued record, or (above 1) takes a record left running by this claim
            // over. A restarted server may deliver it as a first delivery, which every node drops as a
            // duplicate of a run in progress: the chores look again once the store answers.
            l.claimFailed(true);
            if (!storeHere) {
                chores.claimUnanswered(lease.ticket());
            }
            releaseUnanswered(lease);
            return false;
        }
        if (!u.applied() && u.current() == null && !storeHere) {
            // The compare-and-set lost (the claim started from a copy or read that was not the
            // latest) and the read after it found no record: a replica that has not applied the
            // creation, as in pulled(). Dropped, the ticket would leave the job queued for ever.
            l.claimFailed(true);
            Leases.release(lease, ABSENT_RECORD_RECHECK);
            return false;
        }
        if (!u.applied()) {
            l.claimFailed(false); // cancelled, or taken by another node, since the pull
            return false;
        }
        l.read = u.current(); // what the finish's compare-and-set starts from
        JobRecord.Status s = u.current().value().status();
        if (s.attempt() > 1 && lease.delivery() > 1 && s.attempt() - 1 > s.attemptBase()) {
            log.info("job " + l.id + ": taken over by node " + node.id() + " as attempt " + s.attempt());
        }
        l.claimed(s.attempt(), s.cancelRequested());
        return true;
    }

    /** Runs {@code call} on a thread of its own, side by side with the rest of its batch (over a shared store only). */
    Future<?> submit(Runnable call) {
        return sideBySide.submit(call);
    }

    /** Stops the batch threads; the dispatcher, stopped before this, waited for its last batch. */
    void close() {
        if (sideBySide != null) {
            sideBySide.shutdown();
        }
    }

    /**
     * True if the lease does not stand for a runnable attempt of the record: the ticket is stale,
     * or the record runs already and the lease is a first delivery (a duplicate: a running record
     * is taken over only from a lapsed lease).
     */
    static boolean unclaimable(JobRecord r, JobLease lease) {
        return stale(r, lease.ticket()) || r.status().state() == JobState.RUNNING && lease.delivery() == 1;
    }

    /** True if the ticket is the one a manual retry of the (final) record published and has not moved the record to yet. */
    static boolean retryInFlight(JobRecord r, JobTicket t) {
        return r.status().state().isFinal() && r.status().ticket() == t.number() - 1;
    }

    /** True if the record was requeued from this ticket as the next one (an automatic retry). */
    static boolean orphanedRetry(JobRecord r, JobTicket t) {
        JobRecord.Status s = r.status();
        // a manual retry publishes its ticket before its compare-and-set and resets attemptBase to attempt: never orphaned
        return s.state() == JobState.QUEUED && s.ticket() == t.number() + 1 && s.attempt() > s.attemptBase();
    }

    /** True if the ticket no longer stands for a runnable attempt of the record. */
    static boolean stale(JobRecord r, JobTicket t) {
        return stale(r, t.number());
    }

    static boolean stale(JobRecord r, long ticket) {
        JobRecord.Status s = r.status();
        return s.state().isFinal() || s.ticket() != ticket;
    }
}
