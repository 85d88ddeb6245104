package io.gosched.service.job;

import io.gosched.service.job.spi.JobState;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.job.spi.JobRecord;
import tools.jackson.databind.node.NullNode;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.job.spi.JobTicket;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.workload.Run;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * Jobs as readers see them, on any node: the view of a record as it stands in the store, with the
 * live counters of a running attempt wherever it runs (read from its run on this node, else from
 * the latest progress its node sent), and the event stream of one job. Over a shared store the
 * views name the node of each attempt; a node alone does not name itself.
 *
 * <p>Thread-safe.
 */
final class JobViews {

    /** Live progress of a job not heard of for this long is checked against its record (it may have ended meanwhile). */
    private static final long PROGRESS_STALE_NANOS = Duration.ofSeconds(30).toNanos();

    private record Live(JobStore.Progress progress, long atNanos) {}

    private final JobStore store;
    private final HeldJobs held;
    private final GoRuntime runtime;
    private final Clock clock;
    private final ServiceShutdown shutdown;
    /** True if this node or a present one has the named handler: a queued job of one nobody has says it waits for it. */
    private final Predicate<String> handlerPresent;
    /** Over a shared store: views name the nodes, and the progress of other nodes' attempts is followed. */
    private final boolean namesNodes;
    /** The latest progress of attempts running on other nodes, by job id (over a shared store only). */
    private final ConcurrentHashMap<String, Live> progress = new ConcurrentHashMap<>();
    private final AutoCloseable progressFeed;

    JobViews(JobStore store, HeldJobs held, GoRuntime runtime, Clock clock, ServiceShutdown shutdown, Predicate<String> handlerPresent) {
        this.handlerPresent = handlerPresent;
        this.store = store;
        this.held = held;
        this.runtime = runtime;
        this.clock = clock;
        this.shutdown = shutdown;
        this.namesNodes = store.isShared();
        // A read of a job another node runs answers its live counters (protocol: progress is best effort).
        this.progressFeed = !namesNodes ? () -> { } : store.watchAllProgress(p -> {
            if (!held.holds(p.jobId())) { // this node's own runs are read directly
                progress.put(p.jobId(), new Live(p, System.nanoTime()));
            }
        });
    }

    /** The job's record moved (any node's write): its live progress ends with its run. */
    void changed(String id, JobRecord r) {
        if (namesNodes && (r == null || r.status().state() != JobState.RUNNING)) {
            progress.remove(id);
        }
    }

    /** The job as its record stands, with the live counters of a running attempt wherever it runs. */
    JobView get(String id) {
        return view(findSummary(id).value());
    }

    /** A page of the jobs {@code filter} accepts, newest first. */
    JobService.Page list(Predicate<JobView> filter, int page, int size) {
        Map<String, Integer> leaks = leaksByJob(); // once for the page, not once per job
        List<JobView> all = store.list().stream().map(v -> view(v.value(), leaks)).filter(filter)
                .sorted(Comparator.comparing(JobView::submittedAt).reversed().thenComparing(JobView::id)).toList();
        int from = (int) Math.min((long) page * size, all.size());
        return new JobService.Page(all.subList(from, Math.min(from + size, all.size())), page, size, all.size());
    }

    /** The record, with its request; not found for an id that is no job's. */
    Versioned<JobRecord> find(String id) {
        checkId(id);
        return store.get(id).orElseThrow(() -> new NotFoundException("job", id));
    }

    /** The record without its request, for a caller that shows or checks the status only (the in-memory store skips a parse). */
    Versioned<JobRecord> findSummary(String id) {
        checkId(id);
        return store.summary(id).orElseThrow(() -> new NotFoundException("job", id));
    }

    private static void checkId(String id) {
        if (id == null || !JobTicket.isToken(id)) {
            throw new NotFoundException("job", id == null || id.length() > 64 ? "?" : id);
        }
    }

    /**
     * The view of a record. A running attempt shows its live counters: read from its run where it
     * runs on this node, else from the latest progress its node sent.
     */
    JobView view(JobRecord r) {
        return view(r, (Map<String, Integer>) null);
    }

    /** The view of a record, its leaks counted from {@code leaks} (null: read from the runtime). */
    JobView view(JobRecord r, Map<String, Integer> leaks) {
        Live p = namesNodes ? progress.get(r.id()) : null;
        return view(r, p == null ? null : p.progress(), leaks);
    }

    private JobView view(JobRecord r, JobStore.Progress progress) {
        return view(r, progress, null);
    }

    /**
     * Leak reports of this node's runtime ({@link GoRuntime#leakedGoroutines()}, the latest
     * {@code 10 000}) counted by their {@code job} label. In a cluster a job's leaks are known
     * to the node that ran the leaking attempt only.
     */
    private Map<String, Integer> leaksByJob() {
        Map<String, Integer> out = new HashMap<>();
        for (GoroutineInfo g : runtime.leakedGoroutines()) {
            String job = g.labels().get("job");
            if (job != null) {
                out.merge(job, 1, Integer::sum);
            }
        }
        return out;
    }

    private int leaked(String id, Map<String, Integer> leaks) {
        if (leaks != null) {
            return leaks.getOrDefault(id, 0);
        }
        int n = 0;
        for (GoroutineInfo g : runtime.leakedGoroutines()) {
            n += id.equals(g.labels().get("job")) ? 1 : 0;
        }
        return n;
    }

    private JobView view(JobRecord r, JobStore.Progress progress, Map<String, Integer> leaks) {
        JobRecord.Spec sp = r.spec();
        JobRecord.Status s = r.status();
        JobRecord.Counters c = s.counters();
        int live = 0;
        // The record's report is the last one of an attempt that ended; a running attempt's own, once it made one, is newer.
        JobRecord.Report report = s.progress();
        if (s.state() == JobState.RUNNING) {
            HeldJob l = held.get(r.id());
            Run run = l == null ? null : l.run;
            if (run != null && l.attempt == s.attempt()) {
                c = c.plus(new JobRecord.Counters(run.goroutinesSpawned(), run.messagesSent(), run.messagesReceived(), run.stepsRun()));
                live = run.liveGoroutines();
                report = run.report() != null ? run.report() : report;
            } else if (progress != null && progress.attempt() == s.attempt()) {
                c = c.plus(progress.counters());
                live = progress.liveGoroutines();
                report = progress.report() != null ? progress.report() : report;
            }
        }
        Long durationMs = s.startedAt() == null ? null
                : Duration.between(s.startedAt(), s.finishedAt() != null ? s.finishedAt() : clock.instant()).toMillis();
        JobView.Result result = s.state() != JobState.SUCCEEDED ? null
                : JobRecord.Spec.HTTP.equals(sp.kind()) ? new JobView.Result(null, s.lastReceived()) // the target's answer is the result
                // a handler's return value is the result, JSON null for void or null
                : sp.handler() != null ? new JobView.Result(null, s.lastReceived() == null ? NullNode.getInstance() : s.lastReceived())
                : new JobView.Result(s.lastReceived());
        JobRecord.Failure f = s.error();
        // The policy's budget counts from the last manual retry (attemptBase), so the attempt shown never exceeds it.
        int maxAttempts = Math.max(s.attempt(), s.attemptBase() + sp.maxAttempts());
        List<JobView.AttemptView> attempts = s.attempts().isEmpty() ? null : s.attempts().stream().map(a -> new JobView.AttemptView(
                a.number(), namesNodes ? a.node() : null, a.startedAt(), a.finishedAt(),
                a.startedAt() == null || a.finishedAt() == null ? null : Duration.between(a.startedAt(), a.finishedAt()).toMillis(),
                a.outcome(), a.error() == null ? null : new JobView.Error(a.error().reason(), a.error().pointer(), a.error().detail())))
                .toList();
        return new JobView(r.id(), s.state(), sp.name(), sp.template(), sp.priority(), s.attempt(), maxAttempts, sp.timeoutMs(),
                sp.submittedAt(), sp.notBefore(), s.queuedAt(), s.startedAt(), s.finishedAt(), durationMs,
                new JobView.Counters(c.goroutinesSpawned(), c.messagesSent(), c.messagesReceived(), c.stepsRun(), live),
                Optional.of(leaked(r.id(), leaks)).filter(n -> n > 0).orElse(null), sp.maxGoroutines(),
                namesNodes ? s.node() : null, result, f == null ? null : new JobView.Error(f.reason(), f.pointer(), f.detail()), attempts,
                after(sp.after()), sp.schedule(), sp.scheduledFor(), waitingFor(sp, s),
                report == null ? null : new JobView.Progress(report.fraction(), report.message(), report.at()));
    }

    /**
     * What a queued job waits for that is not there: the handler of a handler job no present node
     * has (read from the node registry as of the last heartbeat or so); null otherwise.
     */
    private String waitingFor(JobRecord.Spec sp, JobRecord.Status s) {
        String h = sp.handler();
        return h != null && s.state() == JobState.QUEUED && !handlerPresent.test(h) ? JobView.WAITING_FOR_HANDLER + h : null;
    }

    /** The jobs of {@code after} with their states as the store has them now (one summary read each). */
    private List<JobView.AfterView> after(List<String> after) {
        if (after == null) {
            return null;
        }
        List<JobView.AfterView> out = new java.util.ArrayList<>(after.size());
        for (String d : after) {
            out.add(new JobView.AfterView(d, store.summary(d).map(v -> v.value().status().state().json()).orElse(JobView.AfterView.GONE)));
        }
        return out;
    }

    /**
     * SSE fed by the store's watch of the job (its record as written by any node) and the progress
     * of its running attempt (from whichever node runs it): {@code state} on a state or attempt
     * change, {@code progress} when counters move or the job's code reports progress; ends after the final state or at shutdown.
     */
    Flux<JobEvent> events(String id) {
        findSummary(id); // 404 now rather than an empty stream
        return Flux.<JobView>create(sink -> {
            AtomicReference<JobRecord> record = new AtomicReference<>();
            AtomicReference<JobStore.Progress> progress = new AtomicReference<>();
            Object lock = new Object();
            Runnable emit = () -> {
                JobRecord r = record.get();
                if (r != null) {
                    synchronized (lock) {
                        sink.next(view(r, progress.get()));
                    }
                    if (r.status().state().isFinal()) {
                        sink.complete();
                    }
                }
            };
            AutoCloseable p = store.watchProgress(id, pr -> {
                progress.set(pr);
                emit.run();
            });
            AutoCloseable w = store.watch(id, r -> {
                if (r == null) {
                    sink.complete();
                    return;
                }
                record.set(r);
                emit.run();
            });
            sink.onDispose(() -> {
                closeQuietly(w);
                closeQuietly(p);
            });
        }, FluxSink.OverflowStrategy.LATEST).takeUntilOther(shutdown.draining()).transform(f -> {
            AtomicReference<JobView> last = new AtomicReference<>();
            AtomicInteger seq = new AtomicInteger();
            return f.filter(v -> {
                JobView prev = last.get();
                return prev == null || prev.state() != v.state() || !prev.counters().equals(v.counters()) || prev.attempt() != v.attempt()
                        || !java.util.Objects.equals(prev.progress(), v.progress());
            }).map(v -> {
                JobView prev = last.getAndSet(v);
                JobEvent.Kind kind = prev == null || prev.state() != v.state() || prev.attempt() != v.attempt()
                        ? JobEvent.Kind.STATE : JobEvent.Kind.PROGRESS;
                return new JobEvent(seq.incrementAndGet(), kind, v);
            }).takeUntil(e -> e.job().state().isFinal());
        });
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing to do
        }
    }

    /**
     * Drops live progress not heard of for a while whose record is no longer running: a progress
     * message that arrived after its attempt's final write would otherwise stay for ever.
     */
    void forgetStaleProgress() {
        long now = System.nanoTime();
        for (Live p : progress.values()) {
            if (now - p.atNanos() > PROGRESS_STALE_NANOS) {
                try {
                    Optional<Versioned<JobRecord>> r = store.get(p.progress().jobId());
                    if (r.isEmpty() || r.get().value().status().state() != JobState.RUNNING
                            || r.get().value().status().attempt() != p.progress().attempt()) {
                        progress.remove(p.progress().jobId(), p);
                    }
                } catch (RuntimeException e) {
                    return; // the store is away: next round
                }
            }
        }
    }

    void close() {
        closeQuietly(progressFeed);
    }
}
