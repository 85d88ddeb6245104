package io.gosched.service.job;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.job.spi.JobLease;

/**
 * This node's running slots and goroutine reservation, and the jobs that hold them: what the
 * dispatcher may take from the queue, in which order the pulled jobs start, and when a slot goes
 * back. Every field is guarded by this object's monitor; every method takes it for one whole
 * section (a take settled, a slot refilled), and the {@code *Locked} helpers assert they run
 * under it.
 *
 * <h2>The head waits</h2>
 * Pulled jobs wait in {@link #waitingForRoom} in the order the queue handed them out; only the
 * head starts, when its goroutines fit the reservation ({@code max-live-goroutines}) and its run
 * fits the memory budget, so priority order holds strictly and nothing is pulled meanwhile (other
 * nodes take the rest). When nothing runs, the head starts even without room (see
 * {@link JobMemory#forceStart}).
 */
final class Slots {

    /** What a pick decided: the jobs to claim and start, the superseded ones to drop, and whether the head waits for the dispatcher. */
    record Picked(List<HeldJob> start, List<HeldJob> dropped, boolean forDispatcher) {
        static Picked none() {
            return new Picked(List.of(), List.of(), false);
        }
    }

    /** What a take settled: the jobs picked from it, and (in place) the room promised to the next poll, or -1 for the dispatcher now. */
    record Settled(Picked picked, int next) {}

    /** What a finishing attempt refilled: the jobs picked, and the room promised to a poll in place (0: none). */
    record Refill(Picked picked, int room) {}

    /** What the node held that had not started when it stopped: the jobs that waited, and the leases never claimed. */
    record Unstarted(List<HeldJob> waited, List<JobLease> unclaimed) {}

    private final ServiceProperties.Admission admission;
    private final JobMemory memory;
    private final ServiceShutdown shutdown;
    /** The fewest free slots a finishing attempt polls for (see {@code Dispatcher}, "In place"). */
    private final int inPlaceBatch;

    /** Pulled jobs, started or waiting for room. Guarded by this. */
    private int running;
    /** Goroutines reserved by started jobs. Guarded by this. */
    private long reserved;
    /**
     * Slots promised to a pull or poll under way (its room), then the leases it got until each is
     * a {@link HeldJob} (in {@link #running}) or dropped. {@link #roomLocked} counts them as taken,
     * so that a pull and a poll of this node together never take more than the free slots. Guarded
     * by this.
     */
    private int pulled;
    /** The room of the dispatcher's pull while it waits for tickets (part of {@link #pulled}), 0 otherwise. Guarded by this. */
    private int pullRoom;
    /**
     * A pull or poll holds the order, from its take to the last of its tickets queued up in
     * {@link #waitingForRoom} (or {@link #handedOver}): one at a time, so that the order there is
     * the order the queue handed the tickets out in. Guarded by this.
     */
    private boolean pulling;
    /** Pulled, not claimed yet: waiting for goroutine reservation and memory, in pull order. Guarded by this. */
    private final ArrayDeque<HeldJob> waitingForRoom = new ArrayDeque<>();
    /**
     * Leases polled in place whose claim must wait (a manual retry's compare-and-set in flight),
     * with the ones polled after them, in pull order: the dispatcher claims them before it pulls
     * again. Their slots count in {@link #pulled}. Guarded by this.
     */
    private final ArrayDeque<JobLease> handedOver = new ArrayDeque<>();

    Slots(ServiceProperties.Admission admission, JobMemory memory, ServiceShutdown shutdown) {
        this.admission = admission;
        this.memory = memory;
        this.shutdown = shutdown;
        this.inPlaceBatch = Math.max(1, admission.maxRunningJobs() / 8);
    }

    /**
     * Executed only by the dispatcher. The room of its next pull, promised (it holds the order
     * until {@link #settle}); or 0 after waiting for a change: the finish of an attempt that could
     * not refill its slot itself, or, with {@code inPlace} attempts running, the few milliseconds
     * after which the free slots fewer than a batch are the dispatcher's.
     */
    synchronized int promisePull(boolean inPlace, long inPlaceLookMs, long idleMs) throws InterruptedException {
        int room = pulling ? 0 : roomLocked();
        if (room == 0) {
            wait(inPlace && running > 0 ? inPlaceLookMs : idleMs);
            return 0;
        }
        pulling = true;
        pulled += room;
        pullRoom = room;
        return room;
    }

    /**
     * A pull or poll of {@code room} tickets ended (holding the order): gives the promise back,
     * queues the runnable jobs up in the order the queue handed them out, hands {@code handOver}
     * to the dispatcher, releases the order and picks the waiting jobs that fit now; in place
     * ({@code polled}), promises the room left to the next poll.
     *
     * @param got   how many leases the take got, or -1 if it failed
     * @param here  the labels of the calling goroutine (in place), or none
     */
    synchronized Settled settle(int room, boolean inPlace, int got, List<HeldJob> up, List<JobLease> handOver,
            Map<String, String> here) {
        pulled -= room;
        if (!inPlace) {
            pullRoom = 0;
        }
        running += up.size();
        waitingForRoom.addAll(up);
        handedOver.addAll(handOver);
        pulled += handOver.size();
        pulling = false;
        Picked picked = pickLocked(here);
        int next = 0;
        if (inPlace && got >= 0) {
            if (picked.forDispatcher() || !handedOver.isEmpty()) {
                next = -1;
            } else if (roomLocked() >= inPlaceBatch) {
                if (got == 0) {
                    next = -1; // nothing ready: the dispatcher waits in its pull for the next ticket
                } else {
                    next = roomLocked();
                    pulling = true;
                    pulled += next;
                }
            }
        }
        return new Settled(picked, next);
    }

    /** The leases a poll in place handed over, in their order, with the order held; null if there are none or a take is under way. */
    synchronized List<JobLease> takeHandedOver() {
        if (handedOver.isEmpty() || pulling) {
            return null;
        }
        List<JobLease> leases = new ArrayList<>(handedOver);
        handedOver.clear();
        pulling = true; // their slots count in pulled already: the take gives them back as it queues them up
        return leases;
    }

    /**
     * An attempt ended on its goroutine (in place): its slot and reservation go back, the waiting
     * jobs that fit are picked, and the room left is promised to a poll by this goroutine, if it
     * is a batch at least and no take is under way.
     */
    synchronized Refill endAndRefill(HeldJob l, Map<String, String> here) {
        endLocked(l);
        Picked picked = pickLocked(here);
        boolean forDispatcher = picked.forDispatcher() || !handedOver.isEmpty() && !pulling;
        // Another taker under way (pulling) looks at the room again once done, and sees this slot then.
        // No room: full; or the head waits for memory or goroutines, which the next finish frees and retries.
        int room = forDispatcher || pulling ? 0 : roomLocked();
        if (room < inPlaceBatch) {
            room = 0; // fewer free slots than a batch: the next finish, or the dispatcher's short look, takes them
        }
        if (room > 0) {
            pulling = true;
            pulled += room;
        }
        return new Refill(new Picked(picked.start(), picked.dropped(), forDispatcher), room);
    }

    /** A poll in place gives up its promise of {@code room}; true if the dispatcher should look at the room now. */
    synchronized boolean giveBack(int room) {
        pulled -= room;
        pulling = false;
        return roomLocked() > 0;
    }

    /** The waiting jobs that fit now, picked by the dispatcher (a platform thread: no labels of its own). */
    synchronized Picked pick() {
        return pickLocked(Map.of());
    }

    /** {@code l} no longer holds its slot, nor its reservation. */
    synchronized void end(HeldJob l) {
        endLocked(l);
    }

    /** Wakes the dispatcher waiting in {@link #promisePull}. */
    synchronized void wake() {
        notifyAll();
    }

    /**
     * The node stops: every job still waiting is handed back (its slot goes back here, its lease
     * and charge are the caller's), and so is every lease handed over and never claimed.
     */
    synchronized Unstarted handBack() {
        List<HeldJob> waited = new ArrayList<>(waitingForRoom.size());
        for (HeldJob l : waitingForRoom) {
            handBackLocked(l);
            waited.add(l);
        }
        waitingForRoom.clear();
        running -= waited.size();
        for (HeldJob l : waited) {
            l.transition(HeldJob.State.HANDED_BACK, HeldJob.State.ENDED);
        }
        List<JobLease> unclaimed = new ArrayList<>(handedOver);
        handedOver.clear();
        pulled -= unclaimed.size();
        return new Unstarted(waited, unclaimed);
    }

    /** Attempts running on this node now: pulled jobs waiting for room are not. */
    synchronized int runningHere() {
        return running - waitingForRoom.size();
    }

    /** Jobs pulled by this node and waiting here for room (their records are queued). */
    synchronized int waitingHere() {
        return waitingForRoom.size();
    }

    /** What the slots hold now, and how the tickets came here. */
    synchronized Dispatcher.Dispatch snapshot(long polledInPlace, long pulledByDispatcher, long dispatcherWakeups) {
        return new Dispatcher.Dispatch(running, reserved, pulled, pullRoom, waitingForRoom.size(), handedOver.size(), polledInPlace,
                pulledByDispatcher, dispatcherWakeups);
    }

    /**
     * Free running slots, or 0 while a pulled job waits for room, the goroutine reservation is
     * spent, or the node stops. Slots promised to a pull or poll under way are not free.
     */
    private int roomLocked() {
        assert Thread.holdsLock(this);
        if (shutdown.reached(ServiceShutdown.State.STOPPING) || !waitingForRoom.isEmpty() || !handedOver.isEmpty()
                || reserved >= admission.maxLiveGoroutines()) {
            return 0;
        }
        return Math.max(0, admission.maxRunningJobs() - running - pulled);
    }

    /**
     * Takes the superseded jobs out of {@link #waitingForRoom}, to be dropped, then the head while
     * it fits, reserving its goroutines and memory, to be claimed and started.
     *
     * <p>In place, a job is started from the finishing goroutine with {@code Go.withLabels}, which
     * adds to that goroutine's labels and cannot take one away: a job without a template after one
     * with a template would inherit the other's {@code template} label. Such a job, the head, is
     * left to the dispatcher ({@code forDispatcher}).
     *
     * @param here the labels of the calling goroutine (none on a platform thread)
     */
    private Picked pickLocked(Map<String, String> here) {
        assert Thread.holdsLock(this);
        if (waitingForRoom.isEmpty()) {
            return Picked.none();
        }
        List<HeldJob> start = new ArrayList<>(0);
        List<HeldJob> dropped = new ArrayList<>(0);
        for (Iterator<HeldJob> it = waitingForRoom.iterator(); it.hasNext(); ) {
            HeldJob l = it.next();
            if (l.state() == HeldJob.State.SUPERSEDED) {
                it.remove();
                dropped.add(l);
            }
        }
        HeldJob l;
        while ((l = waitingForRoom.peekFirst()) != null) {
            if (!here.isEmpty() && !l.labels.keySet().containsAll(here.keySet())) {
                return new Picked(start, dropped, true);
            }
            long g = l.spec.workload().goroutines();
            boolean alone = running - waitingForRoom.size() - dropped.size() == 0;
            if (!alone && reserved + g > admission.maxLiveGoroutines()) {
                break;
            }
            if (!memory.tryStart(l.charge)) {
                if (!alone) {
                    break; // a finishing attempt frees memory and retries; the dispatcher looks again shortly
                }
                memory.forceStart(l.charge);
            }
            waitingForRoom.pollFirst();
            if (l.transition(HeldJob.State.WAITING, HeldJob.State.CLAIMING)) {
                reserved += g;
                start.add(l);
            } else {
                dropped.add(l); // superseded since the scan: dropped now rather than claimed and found stale
            }
        }
        return new Picked(start, dropped, false);
    }

    /** A job that waited (or was superseded while waiting) goes back: its lease is released for another node. */
    private void handBackLocked(HeldJob l) {
        assert Thread.holdsLock(this);
        HeldJob.State st;
        do {
            st = l.state(); // WAITING, or SUPERSEDED (the store's watch moves it concurrently)
        } while (!l.transition(st, HeldJob.State.HANDED_BACK));
    }

    /**
     * {@code l} no longer holds its slot nor its goroutine reservation; it is ended. Whether it
     * reserved goroutines is its state's: picked or not, which a concurrent move (a cancel, a
     * fence) does not change.
     */
    private void endLocked(HeldJob l) {
        assert Thread.holdsLock(this);
        HeldJob.State st;
        do {
            st = l.state();
        } while (!l.transition(st, HeldJob.State.ENDED)); // throws if it ended already, or never left the wait
        running--;
        if (!st.picked()) {
            waitingForRoom.remove(l); // only a job not started can wait there
        } else {
            reserved -= l.spec.workload().goroutines();
        }
    }
}
