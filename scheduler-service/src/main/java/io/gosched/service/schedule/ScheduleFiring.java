package io.gosched.service.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.gosched.service.error.ConflictException;
import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.NotFoundException;
import io.gosched.service.error.RefusedException;
import io.gosched.service.job.JobService;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import io.gosched.service.schedule.spi.ScheduleStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Fires the schedules' ticks, on every node at once, each tick once.
 *
 * <h2>One job per tick, whatever the nodes do</h2>
 * A tick is fired in two steps, each safe to repeat on any node:
 * <ol>
 * <li><b>Decide</b>: a compare-and-set of the schedule's record moves its {@code cursor} past the
 * tick and, if the tick fires, names the job ({@code lastJobId}, derived from schedule and tick,
 * see {@link ScheduleService#jobId}) with {@code submitted} false. One node's compare-and-set wins;
 * the others read the record again and find the tick decided. Overlap and misfire are decided
 * here, so they are decided once.</li>
 * <li><b>Admit</b>: the job is admitted under its derived id ({@link JobService#submitScheduled}),
 * then {@code submitted} set true. A node that dies before that leaves {@code submitted} false:
 * whichever node reads the record next admits the job again. The store creates a record only if
 * its id is free, so a second admission finds the first's job, and queues its ticket if the first
 * died between storing the record and queueing it; the queue keeps one copy of a ticket.</li>
 * </ol>
 *
 * <h2>Misfires</h2>
 * A tick more than {@link #MISFIRE_GRACE} old when a node decides it was missed: no node ran, or
 * none reached the store, around it. Missed ticks are counted; {@code misfire: skip} makes no job
 * for them, {@code run-once} one job, for the latest of them. The grace is wide so that a slow
 * node (a long GC pause, a loaded machine) is not taken for a dead cluster.
 *
 * <h2>Why a platform thread and not the runtime's timers</h2>
 * Deciding a tick is a compare-and-set on the store, which blocks on the network in cluster mode:
 * on a goroutine every call would need {@code Go.syscall} to hand its P off, for no gain, since
 * the work per tick is one or two store writes. One platform thread per node ({@value #THREAD})
 * wakes at the earliest next tick of all schedules, or every {@link #MAX_SLEEP} at the latest, to
 * see schedules other nodes made or changed. Time is read from the injected {@link Clock} only, so
 * tests drive {@link #fireDue} with a fixed clock and no thread.
 *
 * <p>Thread-safe; {@link #fireDue} runs on one thread at a time per node.
 */
public final class ScheduleFiring implements AutoCloseable {

    private static final Log log = LogFactory.getLog(ScheduleFiring.class);
    static final String THREAD = "gosched-schedules";
    /** A tick older than this when decided was missed. */
    public static final Duration MISFIRE_GRACE = Duration.ofSeconds(15);
    /** The longest the thread sleeps between rounds: how soon it sees what other nodes changed. */
    static final Duration MAX_SLEEP = Duration.ofMillis(250);
    /**
     * How long after its tick another node's fire, decided and not yet admitted, is left to the
     * node that decided it: that node admits it milliseconds after its compare-and-set, unless it
     * died. Helping earlier is harmless (the job's id makes it once) but doubles the work.
     */
    static final Duration HELP_AFTER = Duration.ofSeconds(2);
    /** The most ticks one round decides per schedule: a schedule far behind catches up over rounds, others are not starved. */
    static final int DECISIONS_PER_ROUND = 100;
    /** The most missed ticks one decision counts and passes over; a longer outage takes several. */
    static final int MAX_COUNTED_MISSES = 100_000;

    private final ScheduleStore store;
    private final JobService jobs;
    private final ScheduleMetrics metrics;
    private final Clock clock;
    private final Object sleeper = new Object();
    private volatile boolean closed;
    private Thread thread;

    public ScheduleFiring(ScheduleStore store, JobService jobs, ScheduleMetrics metrics, Clock clock) {
        this.store = store;
        this.jobs = jobs;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Starts this node's firing thread. */
    public synchronized void start() {
        if (thread == null) {
            thread = Thread.ofPlatform().name(THREAD).daemon(true).start(this::loop);
        }
    }

    private void loop() {
        while (!closed) { // the way out: close()
            Duration sleep = MAX_SLEEP;
            try {
                Instant next = fireDue();
                if (next != null) {
                    Duration until = Duration.between(clock.instant(), next);
                    sleep = until.isNegative() ? Duration.ZERO : until.compareTo(MAX_SLEEP) < 0 ? until : MAX_SLEEP;
                }
            } catch (RuntimeException e) {
                log.warn("firing schedules failed; the next round tries again: " + e);
            }
            synchronized (sleeper) {
                if (!closed && sleep.toMillis() > 0) {
                    try {
                        sleeper.wait(sleep.toMillis());
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }
    }

    /**
     * One round: every schedule's due ticks decided and fired, up to now.
     *
     * @return the earliest next tick of all schedules, or null if none
     */
    public Instant fireDue() {
        Instant earliest = null;
        List<ScheduleMetrics.Times> times = new ArrayList<>();
        for (Versioned<ScheduleRecord> listed : store.list()) {
            String name = listed.value().name();
            try {
                Versioned<ScheduleRecord> v = fire(listed);
                if (v == null) {
                    continue; // deleted meanwhile
                }
                ScheduleRecord r = v.value();
                Instant next = r.paused() ? null : ScheduleParser.ticks(r).next(max(r.cursor(), clock.instant()));
                if (next != null && (earliest == null || next.isBefore(earliest))) {
                    earliest = next;
                }
                times.add(new ScheduleMetrics.Times(name, next == null ? null : next.toEpochMilli() / 1000.0,
                        r.lastFireAt() == null ? null : r.lastFireAt().toEpochMilli() / 1000.0));
            } catch (RuntimeException e) {
                log.warn("schedule " + name + ": its ticks could not be fired this round: " + e);
            }
        }
        metrics.times(times);
        return earliest;
    }

    /**
     * Decides and fires the due ticks of one schedule, as listed (possibly behind the store).
     *
     * @return the record as this round left it, or null if the schedule is gone
     */
    Versioned<ScheduleRecord> fire(Versioned<ScheduleRecord> listed) {
        Versioned<ScheduleRecord> v = listed;
        boolean decidedHere = false;
        for (int step = 0; step < DECISIONS_PER_ROUND; step++) {
            ScheduleRecord r = v.value();
            Instant now = clock.instant();
            Optional<Versioned<ScheduleRecord>> w;
            if (!r.submitted()) {
                // A fire decided (here, or by a node that may have died) and not admitted yet.
                if (!decidedHere && r.lastFireAt() != null && now.isBefore(r.lastFireAt().plus(HELP_AFTER))) {
                    return v; // its node is admitting it
                }
                if (!admit(r)) {
                    return v; // not now: the next round tries again
                }
                w = store.replace(r.submittedJob(), v.revision());
            } else {
                if (r.paused()) {
                    return v;
                }
                Decision d = decide(r, now);
                if (d == null) {
                    return v;
                }
                w = store.replace(d.next(), v.revision());
                decidedHere = w.isPresent();
                if (w.isPresent()) {
                    d.won().run(); // counted by the node whose decision stood, so a tick counts once
                }
            }
            v = w.isPresent() ? w.get() : store.get(r.name()).orElse(null); // lost the race: read what won
            if (v == null) {
                return null;
            }
        }
        return v;
    }

    /** A decision on the next due tick: the record it makes, and what to count once it stands. */
    private record Decision(ScheduleRecord next, Runnable won) {}

    /** The decision on the first undecided tick at or before {@code now}, or null if none is due. */
    private Decision decide(ScheduleRecord r, Instant now) {
        Ticks ticks = ScheduleParser.ticks(r);
        Instant first = ticks.next(r.cursor());
        if (first == null || first.isAfter(now)) {
            return null;
        }
        Instant missedUpTo = now.minus(MISFIRE_GRACE);
        if (first.isBefore(missedUpTo)) {
            // Every tick up to now - grace was missed; the latest of them stands for all with run-once.
            long missed = 0;
            Instant last = first;
            for (Instant t = first; t != null && !t.isAfter(missedUpTo) && missed < MAX_COUNTED_MISSES; t = ticks.next(t)) {
                missed++;
                last = t;
            }
            long n = missed;
            String name = r.name();
            Instant after = missed == MAX_COUNTED_MISSES ? ticks.next(last) : null;
            if (after != null && !after.isAfter(missedUpTo)) {
                // A long outage is decided a chunk at a time; run-once fires on the last chunk only.
                return new Decision(r.decidedUpTo(last), () -> metrics.misfired(name, n));
            }
            if (Misfire.of(r.misfire()) == Misfire.RUN_ONCE) {
                Instant tick = last;
                Decision fire = fireOrSkip(r, tick);
                return new Decision(fire.next(), () -> {
                    metrics.misfired(name, n);
                    fire.won().run();
                });
            }
            return new Decision(r.decidedUpTo(last), () -> metrics.misfired(name, n));
        }
        return fireOrSkip(r, first);
    }

    /** Tick {@code tick} fires, unless the overlap policy says skip and the last job still runs. */
    private Decision fireOrSkip(ScheduleRecord r, Instant tick) {
        if (Overlap.of(r.overlap()) == Overlap.SKIP && lastJobRuns(r)) {
            return new Decision(r.decidedUpTo(tick), () -> metrics.skipped(r.name(), "overlap"));
        }
        return new Decision(r.firing(tick, ScheduleService.jobId(r.name(), tick)), () -> metrics.fired(r.name()));
    }

    private boolean lastJobRuns(ScheduleRecord r) {
        if (r.lastJobId() == null) {
            return false;
        }
        try {
            return !jobs.get(r.lastJobId()).state().isFinal();
        } catch (NotFoundException gone) {
            return false;
        }
    }

    /**
     * Admits the job of the fire {@code r} decided ({@code lastJobId} for tick {@code lastFireAt}),
     * cancelling the one before it first under {@code cancel-previous}.
     *
     * @return true if the fire is settled (admitted, or refused for good); false to try again later
     */
    private boolean admit(ScheduleRecord r) {
        String id = r.lastJobId();
        Instant tick = r.lastFireAt();
        try {
            if (Overlap.of(r.overlap()) == Overlap.CANCEL_PREVIOUS) {
                cancelPrevious(r);
            }
            jobs.submitScheduled(r.job(), id, r.name(), tick);
            return true;
        } catch (InvalidRequestException | RefusedException e) {
            // The job service will not take this tick's job (a limit changed, the queue is full):
            // the tick makes no job; it is not retried, so a full queue is not flooded on its return.
            log.warn("schedule " + r.name() + ": the job of tick " + tick + " was refused: " + e.getMessage());
            metrics.skipped(r.name(), "refused");
            return true;
        } catch (RuntimeException e) {
            log.debug("schedule " + r.name() + ": the job of tick " + tick + " not admitted yet: " + e);
            return false;
        }
    }

    /** Under {@code cancel-previous}: the job of the fire before, if it has not ended. */
    private void cancelPrevious(ScheduleRecord r) {
        String previous = r.previousJobId();
        if (previous == null) {
            return;
        }
        try {
            if (!jobs.get(previous).state().isFinal()) {
                jobs.cancel(previous);
            }
        } catch (ConflictException | NotFoundException ended) {
            // it ended, or is gone, meanwhile
        }
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    /** Stops the thread, waiting a little for a round in progress (its writes are each safe to cut short). */
    @Override
    public void close() {
        closed = true;
        synchronized (sleeper) {
            sleeper.notifyAll();
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
