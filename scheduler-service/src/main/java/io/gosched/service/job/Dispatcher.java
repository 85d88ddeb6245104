package io.gosched.service.job;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.channel.ChannelRegistry;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobNode;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobStore;
import io.gosched.service.workload.Interpreter;
import io.gosched.service.workload.Run;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Dispatch: from the queue to a job's goroutines and back to a free slot. The dispatcher pulls
 * only as many tickets as this node has free running slots ({@link Slots}), has each one's record
 * read ({@link Claims#pulled}), starts the pulled jobs that fit in pull order (the claim's
 * compare-and-set, then the attempt's main goroutine), and, when an attempt ended
 * ({@link Finisher}), gives its slot back.
 *
 * <h2>Threads</h2>
 * <ul>
 * <li>the dispatcher ({@code gosched-job-dispatch}, a platform thread) pulls, waiting in the
 *     queue's pull for the next ticket while it has room;</li>
 * <li>in place, over a queue that answers a poll without blocking (in this process's memory): a
 *     finishing attempt refills its slot itself, on its own goroutine ({@link #ended}), and the
 *     dispatcher pulls only when the queue ran dry and starts what a goroutine cannot;</li>
 * <li>the attempt's outcome is written on its main goroutine where the store lives in this
 *     process (its answers come under short locks), else by a finisher (a virtual thread per
 *     finish: two round trips to NATS each, which a goroutine must not wait on); a finisher also
 *     ends an attempt whose main goroutine died ({@link #finishOffGoroutine}).</li>
 * </ul>
 *
 * <h2>In place</h2>
 * A finishing attempt polls for the free slots in batches of an eighth of max-running-jobs at
 * least: polling one ticket per finished job took the queue's and the slots' locks once per job,
 * against the submitting thread, and a loaded machine that deschedules a lock's holder stalls
 * whoever waits for it (JFR: bench/results/NOTES.md); a batch takes them once per batch. Free
 * slots fewer than a batch are the dispatcher's, which looks every {@value #IN_PLACE_LOOK_MS} ms
 * while jobs run.
 */
final class Dispatcher {

    private static final Log log = LogFactory.getLog(Dispatcher.class);
    /** How long one pull waits for a ticket before the dispatcher looks at its room again. */
    private static final Duration PULL_WAIT = Duration.ofMillis(500);
    /** How often the dispatcher looks for free slots fewer than a batch while jobs run (in place). */
    private static final long IN_PLACE_LOOK_MS = 10;
    /** How often an idle dispatcher looks again for memory freed by anything else. */
    private static final long IDLE_LOOK_MS = 200;
    /** Most polls one finishing attempt makes in a row (each may find stale tickets that free their slots again). */
    private static final int IN_PLACE_POLLS = 4;

    /** What the slots hold now, and how the tickets came here: for tests and the benchmark's notes. */
    record Dispatch(int running, long reserved, int pulled, int pullRoom, int waitingForRoom, int handedOver, long polledInPlace,
            long pulledByDispatcher, long dispatcherWakeups) {
        /** Leases taken and not yet queued up or dropped: {@code pulled} less the room of a pull still waiting for tickets. */
        int inFlight() {
            return pulled - pullRoom;
        }
    }

    private final Slots slots;
    private final HeldJobs held;
    private final Claims claims;
    private final Finisher finisher;
    private final JobMemory memory;
    private final GoRuntime runtime;
    private final ChannelRegistry channels;
    private final JobNode node;
    private final JobQueue queue;
    private final JobStore store;
    private final ServiceShutdown shutdown;
    private final Interpreter interpreter = new Interpreter();
    /** The queue answers a poll without blocking: finishing attempts refill their slots in place. */
    private final boolean inPlace;
    /** The store lives in this process: an attempt's outcome is written on its main goroutine. */
    private final boolean finishOnGoroutine;
    /**
     * Where a finish runs off the goroutine: a virtual thread per finish over a shared store; two
     * platform threads where the store lives in this process (only for attempts whose main
     * goroutine died).
     */
    private final ExecutorService finishers;
    /** Tickets polled in place by finishing attempts; tickets pulled by the dispatcher; wake-ups of the dispatcher by finishing attempts. */
    private final LongAdder polledInPlace = new LongAdder();
    private final LongAdder pulledByDispatcher = new LongAdder();
    private final LongAdder dispatcherWakeups = new LongAdder();
    private final Thread thread;

    Dispatcher(Slots slots, HeldJobs held, Claims claims, Finisher finisher, JobMemory memory, GoRuntime runtime, ChannelRegistry channels,
            JobNode node, JobQueue queue, JobStore store, ServiceShutdown shutdown) {
        this.slots = slots;
        this.held = held;
        this.claims = claims;
        this.finisher = finisher;
        this.memory = memory;
        this.runtime = runtime;
        this.channels = channels;
        this.node = node;
        this.queue = queue;
        this.store = store;
        this.shutdown = shutdown;
        this.inPlace = queue.pollsWithoutBlocking();
        this.finishOnGoroutine = !store.isShared();
        // Over a shared store a finish is two round trips to NATS (the compare-and-set, the ack), so finishes run
        // side by side, a virtual thread each; two platform threads bounded a node at 2 / (2 x the round trip),
        // which grows to milliseconds on a loaded machine (bench/results/NOTES.md, "cluster completions").
        this.finishers = finishOnGoroutine
                ? Executors.newFixedThreadPool(2, r -> Thread.ofPlatform().name("gosched-job-finisher", 0).daemon(true).unstarted(r))
                : Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("gosched-job-finisher-", 0).factory());
        this.thread = Thread.ofPlatform().name("gosched-job-dispatch").daemon(true).unstarted(this::loop);
    }

    void start() {
        thread.start();
    }

    /**
     * The dispatcher's loop; ends when the node is closed. In place, finishing attempts refill
     * their slots themselves ({@link #ended}): the dispatcher pulls when the queue ran dry (a
     * blocking pull waits for the next submission), starts what a goroutine could not, and looks
     * again every {@value #IDLE_LOOK_MS} ms for memory freed by anything else. Executed only by the
     * dispatcher thread.
     */
    private void loop() {
        while (!shutdown.reached(ServiceShutdown.State.CLOSED)) {
            try {
                startPicked(slots.pick());
                claimHandedOver();
                int room = slots.promisePull(inPlace, IN_PLACE_LOOK_MS, IDLE_LOOK_MS);
                if (room > 0) {
                    take(room, false, Map.of(), null);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                log.warn("job dispatch: " + e.getMessage() + "; trying again shortly", e);
                Leases.pause(Duration.ofMillis(500));
            }
        }
    }

    /**
     * Takes up to {@code room} tickets, promised in the slots with the order held: a blocking pull
     * on the dispatcher, a poll in place, or the leases {@code given} back by polls. Reads each
     * one's record, then settles the take in one section of the slots (the runnable jobs queued
     * up in the order the queue handed them out, or handed over), and starts what that picked.
     *
     * @param here the labels of the calling goroutine (in place), or none
     * @return in place: the room promised to the next poll (0: none), or -1 if the dispatcher is needed now; on the dispatcher, 0
     */
    private int take(int room, boolean polling, Map<String, String> here, List<JobLease> given) throws InterruptedException {
        List<JobLease> got = null;
        List<HeldJob> up = new ArrayList<>(Math.min(room, 8));
        int handFrom = -1;
        Slots.Settled settled = null;
        try {
            if (given != null) {
                got = given;
            } else {
                got = polling ? queue.poll(room) : queue.pull(room, PULL_WAIT);
                (polling ? polledInPlace : pulledByDispatcher).add(got.size());
            }
            Map<String, Claims.Read> records = claims.readTogether(got);
            for (int i = 0; i < got.size() && handFrom < 0; i++) {
                JobLease lease = got.get(i);
                if (shutdown.reached(ServiceShutdown.State.STOPPING)) {
                    Leases.release(lease);
                    continue;
                }
                try {
                    switch (claims.pulled(lease, polling, records.get(lease.ticket().jobId()))) {
                        case Claims.Pulled.Held h -> up.add(h.job());
                        case Claims.Pulled.HandOver h -> handFrom = i; // this one must wait: it and the ones after it go to the dispatcher, in order
                        case Claims.Pulled.Done d -> { }
                    }
                } catch (RuntimeException e) {
                    log.warn("job " + lease.ticket().jobId() + ": claim failed (" + e.getMessage() + "); its ticket goes back", e);
                    Leases.release(lease);
                }
            }
        } finally {
            List<JobLease> handOver = handFrom < 0 ? List.of() : got.subList(handFrom, got.size());
            settled = slots.settle(room, polling, got == null ? -1 : got.size(), up, handOver, here);
            startPicked(settled.picked());
        }
        return settled.next();
    }

    /** The dispatcher: claims the leases a poll in place handed over, in their order, before it pulls again. */
    private void claimHandedOver() throws InterruptedException {
        List<JobLease> leases = slots.takeHandedOver();
        if (leases != null) {
            take(leases.size(), false, Map.of(), leases);
        }
    }

    /**
     * A finished attempt ended on this thread: its slot, goroutine reservation and memory go back.
     * In place, this thread refills the slot itself, without blocking (the queue answers a poll
     * under a short lock): it starts the jobs that waited for room, then polls and claims the next
     * tickets and starts them, on this very goroutine. The dispatcher is woken only when this
     * cannot be done here: the queue had nothing ready (the dispatcher's blocking pull waits for the
     * next submission), a claim must wait, or the next job cannot be started with its own labels
     * from this goroutine. Over a remote queue the dispatcher pulls, as ever.
     */
    private void ended(HeldJob l) {
        held.remove(l);
        boolean wake = true;
        if (inPlace && !shutdown.reached(ServiceShutdown.State.STOPPING)) {
            try {
                wake = refill(l);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // a poll does not wait: not from there
            } catch (RuntimeException e) {
                log.warn("job dispatch in place: " + e.getMessage() + "; the dispatcher takes over", e);
            }
        } else {
            slots.end(l);
        }
        if (wake) {
            dispatcherWakeups.increment();
            slots.wake();
        }
    }

    /** Ends {@code l} and refills in place while there is room; true if the dispatcher is needed now. */
    private boolean refill(HeldJob l) throws InterruptedException {
        Map<String, String> here = Go.labels();
        Slots.Refill r = slots.endAndRefill(l, here);
        startPicked(r.picked());
        if (r.picked().forDispatcher()) {
            return true;
        }
        int room = r.room();
        for (int i = 0; room > 0; i++) {
            if (i == IN_PLACE_POLLS) {
                return slots.giveBack(room);
            }
            room = take(room, true, here, null);
        }
        return room < 0;
    }

    /** Outside the slots' section: drops what a pick found superseded, claims and starts what it picked. */
    private void startPicked(Slots.Picked picked) {
        for (HeldJob l : picked.dropped()) {
            drop(l);
        }
        if (claims.sideBySide() && picked.start().size() > 1) {
            claimAndStartTogether(picked.start());
            return;
        }
        for (HeldJob l : picked.start()) {
            claimAndStart(l);
        }
    }

    /**
     * Over a shared store the claims of one batch go out together. Each is a round trip to NATS,
     * and made one after another they were half of the dispatcher's time under a flood, which
     * bounded the node's completions (bench/results/NOTES.md, "cluster completions"). The claims
     * are independent (a record and a held job each), so each runs on a virtual thread of its own
     * and the caller waits for the batch: the room the batch was pulled for stays accounted as
     * before.
     */
    private void claimAndStartTogether(List<HeldJob> start) {
        List<Future<?>> started = new ArrayList<>(start.size());
        for (HeldJob l : start) {
            started.add(claims.submit(() -> claimAndStart(l)));
        }
        boolean interrupted = false;
        for (Future<?> f : started) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the claims end on their own (a compare-and-set has a timeout): wait them out
                } catch (ExecutionException e) {
                    log.warn("a claim failed unexpectedly", e.getCause());
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The claim, then the job's main goroutine; a job whose claim fails is dropped. */
    private void claimAndStart(HeldJob l) {
        if (!claims.claim(l)) {
            drop(l);
            return;
        }
        try {
            // Every goroutine of the job carries job=<id> (and its template): dumps, leaks, traces. The
            // main goroutine inherits them from this thread at its go call rather than setting them
            // itself, so that it keeps them for its whole life: the uncaught-exception policy runs after
            // the goroutine's body unwound and finds the job by them (Panics).
            Go.withLabels(l.labels, () -> runtime.go(() -> run(l)));
        } catch (RuntimeException refused) { // the runtime is closing: hand the job back
            l.abandon();
            memory.finish(l.charge, null, null);
            memory.evict(l.charge);
            endHere(l);
            Leases.release(l.lease);
        }
    }

    /** A pulled job that is not run here: its lease ends (unless handed back already), its charge and slot go back. */
    private void drop(HeldJob l) {
        if (l.state() != HeldJob.State.ABANDONED) {
            Leases.complete(l.lease);
        }
        memory.finish(l.charge, null, null);
        memory.evict(l.charge);
        endHere(l);
    }

    /** {@code l} is no longer held: its slot and reservation go back, without a refill. */
    private void endHere(HeldJob l) {
        held.remove(l);
        slots.end(l);
    }

    /** The main goroutine of one attempt. */
    private void run(HeldJob l) {
        l.rootGoid = Go.goid();
        Run run = Attempt.start(l.spec, channels, name -> "channel '" + name + "' does not exist on node " + node.id()
                + ", where the job runs (deleted before the job started)");
        run.results(l.results);
        run.job(l.id, l.attempt);
        l.run = run;
        if (!l.runsOn()) {
            run.context().cancel(); // cancelled, fenced or abandoned before it started
        }
        if (run.failure() == null) {
            interpreter.run(l.spec.workload(), run);
        }
        RuntimeException err = run.context().err();
        run.context().cancel(); // releases the deadline timer
        if (finishOnGoroutine) {
            // A store and queue in this process never touch the network: the outcome is written from here,
            // without a hand-off to a finisher thread and its wake-up per job.
            finishAndEnd(l, run, err);
        } else {
            finishers.execute(() -> finishAndEnd(l, run, err));
        }
    }

    /** The attempt's outcome written, then its slot given back: on every way out, the slot is refilled or the dispatcher told. */
    private void finishAndEnd(HeldJob l, Run run, RuntimeException err) {
        try {
            finisher.finish(l, run, err);
        } finally {
            ended(l);
        }
    }

    /** The attempt's main goroutine died (an uncaught exception): nothing else would finish it; a finisher does. */
    void finishOffGoroutine(HeldJob l, Run run, RuntimeException err) {
        try {
            finishers.execute(() -> finishAndEnd(l, run, err));
        } catch (RuntimeException closing) {
            log.debug("job " + l.id + ": finishers closed; the attempt is not written", closing);
        }
    }

    /**
     * The node stops, and its jobs move to other nodes: pulls stop; what waited here and was
     * never claimed goes straight back to the queue; running attempts are cancelled and, once
     * their goroutines ended (up to {@code grace}), their leases are released so that another
     * node takes the jobs at once (as their next attempt) instead of after the ack wait. Nothing is
     * written as cancelled: the jobs are not, they move.
     *
     * @return true if no job is held any more
     */
    boolean handBack(Duration grace) throws InterruptedException {
        shutdown.advance(ServiceShutdown.State.STOPPING);
        thread.interrupt();
        Slots.Unstarted unstarted = slots.handBack();
        unstarted.unclaimed().forEach(Leases::release);
        for (HeldJob l : unstarted.waited()) { // pulled, never claimed: straight back to the queue
            held.remove(l);
            memory.abandonClaimed(l.charge);
            Leases.release(l.lease);
        }
        List<HeldJob> mine = new ArrayList<>(held.all());
        for (HeldJob l : mine) {
            l.abandon();
            l.cancel();
        }
        awaitNoneHeld(grace);
        for (HeldJob l : mine) {
            if (l.lease.isOpen()) {
                Leases.release(l.lease);
            }
        }
        return held.isEmpty();
    }

    /** Waits up to {@code grace} for the held jobs to end; true if none is held any more. Not on a goroutine. */
    boolean awaitNoneHeld(Duration grace) throws InterruptedException {
        long end = System.nanoTime() + grace.toNanos();
        while (!held.isEmpty() && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        return held.isEmpty();
    }

    /** The dispatcher and the finishers stop (the node is closed); the last batch's claims were waited for. */
    void close() {
        shutdown.advance(ServiceShutdown.State.CLOSED);
        thread.interrupt();
        finishers.shutdown();
        claims.close();
    }

    /** Attempts running on this node now (what gosched.jobs.live shows): pulled jobs waiting for room are not. */
    int runningHere() {
        return slots.runningHere();
    }

    /** Jobs waiting: in the queue, and pulled by this node but waiting here for room (their records are queued too). */
    long waiting() {
        OptionalInt exact = store.countQueued();
        if (exact.isPresent()) {
            return exact.getAsInt();
        }
        return queue.depth() + slots.waitingHere();
    }

    /** What the slots hold now, and how the tickets came here. */
    Dispatch dispatch() {
        return slots.snapshot(polledInPlace.sum(), pulledByDispatcher.sum(), dispatcherWakeups.sum());
    }
}
