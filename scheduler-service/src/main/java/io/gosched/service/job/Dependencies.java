package io.gosched.service.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.gosched.service.error.Violation;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.metrics.ServiceMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Jobs that wait for other jobs ({@code "after": [...]}): a job submitted with {@code after} is
 * stored {@code waiting}, with no ticket in the queue, and this class moves it on:
 * <ul>
 * <li>every job it names {@code succeeded}: {@code waiting -> queued} by compare-and-set, and
 *     only the writer whose CAS landed enqueues ticket 1, so the job is queued exactly once
 *     whatever the number of nodes resolving it at the same time;</li>
 * <li>one of them ended otherwise ({@code failed}, {@code cancelled}, {@code timed_out}) or is
 *     gone (removed by retention, or never there): {@code waiting -> cancelled} by CAS, with an
 *     error of reason {@value JobRecord.Failure#DEPENDENCY} naming that job and its state.</li>
 * </ul>
 * What triggers a resolution, and why nothing is missed:
 * <ol>
 * <li>the submitter resolves the job right after creating its record: a job it names that ended
 *     between the check of the body and the create is seen then ({@link JobStore#get} sees every
 *     acknowledged write);</li>
 * <li>every node keeps an index, dependency id to waiting jobs, fed by the store's watch of all
 *     writes ({@link JobStore#watchAll}); a write that makes a job final (or removes it) resolves
 *     the jobs waiting on it. A job that ends after the submitter's create is in the submitter's
 *     index already (it tracks the job before creating it);</li>
 * <li>a sweep every {@link #SWEEP_EVERY_MS} ms resolves every waiting job whose dependencies have
 *     all ended, read from the store's list: the safety net for a node that restarted, a watch that
 *     lagged, or a submitter that died between its create and its resolution.</li>
 * </ol>
 * A node that dies between the release's CAS and its enqueue leaves a {@code queued} record with
 * no ticket; {@link Chores} finds such records and enqueues their ticket (see its
 * {@code sweepUnticketed}). Resolutions run on one platform thread of their own
 * ({@code gosched-job-deps}): the store's watch callbacks must stay short, and a resolution reads
 * and writes the store.
 *
 * <p>Thread-safe.
 */
final class Dependencies {

    private static final Log log = LogFactory.getLog(Dependencies.class);
    private static final String THREAD = "gosched-job-deps";
    static final long SWEEP_EVERY_MS = 2_000;

    private final JobStore store;
    private final JobQueue queue;
    private final Clock clock;
    private final ServiceMetrics metrics;
    private final JobSpecs specs;
    private final Pinning pinning;
    private final ScheduledExecutorService thread;
    /** Waiting jobs this node knows of, with what they wait for: what admission counts, and the sweep resolves. */
    private final ConcurrentHashMap<String, List<String>> waiting = new ConcurrentHashMap<>();
    /** A dependency's id to the waiting jobs that name it. */
    private final ConcurrentHashMap<String, Set<String>> dependents = new ConcurrentHashMap<>();
    /** Jobs with a resolution scheduled on the thread and not started yet: one is enough. */
    private final Set<String> scheduled = ConcurrentHashMap.newKeySet();

    Dependencies(JobStore store, JobQueue queue, Clock clock, ServiceMetrics metrics, JobSpecs specs, Pinning pinning) {
        this.store = store;
        this.queue = queue;
        this.clock = clock;
        this.metrics = metrics;
        this.specs = specs;
        this.pinning = pinning;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().name(THREAD).daemon(true).unstarted(r));
    }

    /** Starts the sweep; before it, the index is filled with the waiting jobs the store holds (a node that starts late). */
    void start() {
        thread.scheduleWithFixedDelay(this::sweep, SWEEP_EVERY_MS, SWEEP_EVERY_MS, TimeUnit.MILLISECONDS);
        thread.execute(this::sweep);
    }

    void close() {
        thread.shutdownNow();
    }

    /** Waiting jobs known here (all of the cluster's, as the watch delivered them): counted by {@code max-queued-jobs}. */
    int waitingCount() {
        return waiting.size();
    }

    /**
     * Checks that each id of {@code after} names a job the store holds, adding a violation at
     * {@code pointer + "/" + i} for each that does not.
     */
    void checkExist(List<String> after, String pointer, List<Violation> out) {
        for (int i = 0; i < after.size(); i++) {
            if (store.summary(after.get(i)).isEmpty()) {
                out.add(new Violation(pointer + "/" + i, "names no job: '" + after.get(i) + "' (unknown, or removed by retention)"));
            }
        }
    }

    /** Job {@code id} waits for {@code after}: indexed before its record is created, so no end of theirs goes unseen. */
    void track(String id, List<String> after) {
        if (waiting.putIfAbsent(id, after) == null) {
            for (String d : after) {
                dependents.computeIfAbsent(d, k -> ConcurrentHashMap.newKeySet()).add(id);
            }
        }
    }

    /** Job {@code id} waits no more (released, cancelled, or its create was undone). */
    void untrack(String id) {
        List<String> after = waiting.remove(id);
        if (after != null) {
            for (String d : after) {
                dependents.computeIfPresent(d, (k, set) -> {
                    set.remove(id);
                    return set.isEmpty() ? null : set;
                });
            }
        }
    }

    /**
     * The store's watch of all writes: a waiting job is indexed, one that moved on is dropped, and
     * the jobs waiting on a job that ended or went are resolved on this class's thread. Short: no
     * store access here.
     */
    void changed(String id, JobRecord r) {
        if (r != null && r.status().state() == JobState.WAITING) {
            track(id, r.spec().dependencies());
            return;
        }
        untrack(id);
        if (r == null || r.status().state().isFinal()) {
            Set<String> ds = dependents.get(id);
            if (ds != null) {
                for (String w : ds) {
                    resolveSoon(w);
                }
            }
        }
    }

    private void resolveSoon(String id) {
        if (scheduled.add(id)) {
            try {
                thread.execute(() -> {
                    scheduled.remove(id);
                    try {
                        resolve(id);
                    } catch (RuntimeException e) {
                        log.debug("job " + id + ": resolving its dependencies failed; the sweep tries again", e);
                    }
                });
            } catch (RejectedExecutionException closed) {
                scheduled.remove(id);
            }
        }
    }

    /** Where a waiting job's dependencies stand. */
    private record Verdict(boolean ready, int blocker, String blockerId, String blockerState) {
        static final Verdict PENDING = new Verdict(false, -1, null, null);
        static final Verdict READY = new Verdict(true, -1, null, null);
    }

    /**
     * Moves waiting job {@code id} on if its dependencies allow (see the class comment); nothing
     * if it is not waiting or some dependency has not ended. Safe to call any number of times
     * from any number of nodes: every move is a CAS from {@code waiting}, and only its winner acts.
     *
     * @return the record as it stands after the call, or null if there is none
     */
    JobRecord resolve(String id) {
        Optional<Versioned<JobRecord>> cur = store.get(id);
        if (cur.isEmpty()) {
            untrack(id);
            return null;
        }
        JobRecord w = cur.get().value();
        if (w.status().state() != JobState.WAITING) {
            untrack(id);
            return w;
        }
        Verdict v = verdict(w.spec().dependencies(), dep -> store.summary(dep).map(x -> x.value().status().state()).orElse(null));
        if (!v.ready() && v.blocker() < 0) {
            return w;
        }
        Instant now = clock.instant();
        JobRecord.Failure why = v.ready() ? null : new JobRecord.Failure(JobRecord.Failure.DEPENDENCY, "/after/" + v.blocker(),
                "job '" + v.blockerId() + "' it waited for " + (v.blockerState() == null
                        ? "is gone (removed by retention, or its create was undone)" : "ended " + v.blockerState()));
        JobStore.Update u = store.update(id, cur.get(), r -> r.status().state() != JobState.WAITING ? null
                : r.withStatus(v.ready() ? r.status().released(now)
                        : r.status().finished(JobState.CANCELLED, now, JobRecord.Counters.ZERO, null, why)));
        if (!u.applied()) {
            if (u.current() != null && u.current().value().status().state() != JobState.WAITING) {
                untrack(id);
            }
            return u.current() == null ? null : u.current().value();
        }
        untrack(id);
        JobRecord r = u.current().value();
        if (!v.ready()) {
            specs.forget(id);
            metrics.jobFinished(JobType.of(r.spec()), JobState.CANCELLED.json(), Duration.ZERO);
            return r;
        }
        // Only the CAS winner gets here, once per job. A death before the enqueue leaves a queued record with
        // no ticket: Chores.sweepUnticketed enqueues the same ticket, which the queue deduplicates.
        try {
            queue.enqueue(new JobTicket(id, r.status().ticket(), r.spec().priority(), r.spec().notBefore(), pinning.pinQuietly(r)));
        } catch (RuntimeException e) {
            log.warn("job " + id + ": released from waiting, but its ticket could not be queued; the chores enqueue it", e);
        }
        return r;
    }

    /** Decides from each dependency's state (null: gone): the first that ended otherwise than succeeded blocks. */
    private static Verdict verdict(List<String> after, java.util.function.Function<String, JobState> stateOf) {
        boolean pending = false;
        for (int i = 0; i < after.size(); i++) {
            JobState s = stateOf.apply(after.get(i));
            if (s == null || s.isFinal() && s != JobState.SUCCEEDED) {
                return new Verdict(false, i, after.get(i), s == null ? null : s.json());
            }
            pending |= s != JobState.SUCCEEDED;
        }
        return pending ? Verdict.PENDING : Verdict.READY;
    }

    /**
     * The safety net: every waiting job the store holds is indexed, and the ones whose
     * dependencies have all ended (by the store's list: one read for all) are resolved.
     * Executed only by this class's thread.
     */
    private void sweep() {
        if (!store.isShared() && waiting.isEmpty()) {
            return; // a store in this process calls the watch in the writer's step: the index is whole, and empty
        }
        try {
            List<Versioned<JobRecord>> all = store.list();
            Map<String, JobState> states = new HashMap<>(all.size() * 2);
            List<JobRecord> waits = new ArrayList<>();
            for (Versioned<JobRecord> v : all) {
                states.put(v.value().id(), v.value().status().state());
                if (v.value().status().state() == JobState.WAITING) {
                    waits.add(v.value());
                }
            }
            for (String id : waiting.keySet()) {
                JobState s = states.get(id);
                if (s != null && s != JobState.WAITING) {
                    untrack(id); // moved on without this node hearing of it
                }
            }
            for (JobRecord w : waits) {
                track(w.id(), w.spec().dependencies());
                Verdict v = verdict(w.spec().dependencies(), states::get);
                if (v.ready() || v.blocker() >= 0) {
                    resolve(w.id());
                }
            }
        } catch (RuntimeException e) {
            log.debug("dependency sweep failed; it runs again shortly", e);
        }
    }
}
