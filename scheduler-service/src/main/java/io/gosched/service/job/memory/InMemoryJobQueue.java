package io.gosched.service.job.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.gosched.service.job.JobSpec;
import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobTicket;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The embedded {@link JobQueue}: tickets in this process's memory, for the one node that pulls
 * them. Ten FIFO levels for the ready tickets and a heap ordered by {@code notBefore} for the
 * delayed ones, under one lock; a pull that finds nothing ready waits on a condition that an
 * enqueue signals, or until the earliest delayed ticket falls due.
 *
 * <h2>Leases</h2>
 * The process that holds a lease is the process that holds the queue, so an open lease never
 * lapses by itself. {@link JobLease#abandon()} (a runner that gives up on its lease without
 * ending it) lets it lapse as a dead node's would: the ticket comes back after the ack wait, one
 * delivery later. A ticket handed out {@code maxDeliver} times without being completed goes to
 * the {@link LostHandler} instead of being handed out again, as on JetStream.
 *
 * <p>Pins ({@link JobTicket#node()}) are not looked at: every ticket here is for this node.
 * A ticket enqueued again while it is still in the queue (waiting or leased) is ignored.
 * Nothing is refused for size: what the queue may hold is bounded by the job service's
 * admission ({@code max-queued-jobs}) and its memory budget, which charge the jobs' records.
 */
public final class InMemoryJobQueue implements JobQueue {

    private static final Log log = LogFactory.getLog(InMemoryJobQueue.class);
    /** How long a ticket the lost handler threw on waits before it is handed to the handler again. */
    private static final Duration LOST_RETRY = Duration.ofSeconds(1);

    private final Clock clock;
    private final Duration ackWait;
    private final int maxDeliver;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Entry>[] levels = new ArrayDeque[JobSpec.MAX_PRIORITY + 1]; // guarded by lock
    private final PriorityQueue<Entry> delayed = new PriorityQueue<>(
            Comparator.comparing((Entry e) -> e.due).thenComparingLong(e -> e.seq)); // guarded by lock
    /** Every ticket in the queue, waiting, delayed or leased, by {@code jobId/number}. Guarded by lock. */
    private final Map<String, Entry> byKey = new HashMap<>();
    private long nextSeq; // guarded by lock
    private int waiting; // guarded by lock: entries in levels or delayed
    private volatile LostHandler lostHandler;

    /** One ticket in the queue. Fields guarded by the queue's lock. */
    private static final class Entry {
        final JobTicket ticket;
        final String key;
        long seq;
        Instant due;
        int deliveries;
        /** Ready or delayed, not leased. */
        boolean waiting;
        /** The open lease on it, or null while it waits. */
        Lease lease;

        Entry(JobTicket ticket, String key) {
            this.ticket = ticket;
            this.key = key;
        }
    }

    public InMemoryJobQueue(Clock clock, Duration ackWait, int maxDeliver) {
        if (ackWait.isNegative() || ackWait.isZero()) {
            throw new IllegalArgumentException("ack wait must be positive: " + ackWait);
        }
        if (maxDeliver < 1) {
            throw new IllegalArgumentException("max deliver must be at least 1: " + maxDeliver);
        }
        this.clock = clock;
        this.ackWait = ackWait;
        this.maxDeliver = maxDeliver;
        for (int i = 0; i < levels.length; i++) {
            levels[i] = new ArrayDeque<>();
        }
    }

    private static String key(JobTicket t) {
        return t.jobId() + '/' + t.number();
    }

    @Override
    public void enqueue(JobTicket ticket) {
        String key = key(ticket);
        lock.lock();
        try {
            if (byKey.containsKey(key)) {
                return; // the same ticket again: one in the queue
            }
            Entry e = new Entry(ticket, key);
            byKey.put(key, e);
            put(e, ticket.notBefore());
        } finally {
            lock.unlock();
        }
    }

    /** Makes {@code e} wait: ready at once, or delayed until {@code due}. Lock held. */
    private void put(Entry e, Instant due) {
        e.seq = nextSeq++;
        e.waiting = true;
        waiting++;
        if (due != null && due.isAfter(clock.instant())) {
            e.due = due;
            delayed.add(e);
        } else {
            e.due = null;
            levels[e.ticket.priority()].addLast(e);
        }
        arrived.signalAll();
    }

    @Override
    public List<JobLease> pull(int room, Duration maxWait) throws InterruptedException {
        if (room <= 0) {
            return List.of();
        }
        long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
        while (true) {
            List<Entry> lost = new ArrayList<>();
            List<JobLease> got = new ArrayList<>();
            lock.lockInterruptibly();
            try {
                take(room, got, lost);
                if (got.isEmpty() && lost.isEmpty()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return List.of();
                    }
                    Entry next = delayed.peek();
                    if (next != null) {
                        left = Math.min(left, Math.max(1, Duration.between(clock.instant(), next.due).toNanos()));
                    }
                    arrived.awaitNanos(left);
                    continue;
                }
            } finally {
                lock.unlock();
            }
            for (Entry e : lost) {
                handOver(e);
            }
            if (!got.isEmpty()) {
                return got;
            }
        }
    }

    @Override
    public Duration leaseTime() {
        return ackWait;
    }

    @Override
    public boolean holdsTicketOf(String jobId) {
        lock.lock();
        try {
            for (Entry e : byKey.values()) {
                if (e.ticket.jobId().equals(jobId)) {
                    return true;
                }
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** This process's memory, one lock held for a few pointer moves: never blocks. */
    @Override
    public boolean pollsWithoutBlocking() {
        return true;
    }

    /**
     * {@link #pull} without the wait: the ready tickets there are now, up to {@code room}. A spent
     * ticket that fell due meanwhile goes to the lost handler on this thread, as in a pull; the
     * engine's handler writes to the in-memory store only.
     */
    @Override
    public List<JobLease> poll(int room) {
        if (room <= 0) {
            return List.of();
        }
        List<Entry> lost = new ArrayList<>(0);
        List<JobLease> got = new ArrayList<>(Math.min(room, 8));
        lock.lock();
        try {
            take(room, got, lost);
        } finally {
            lock.unlock();
        }
        for (Entry e : lost) {
            handOver(e);
        }
        return got;
    }

    /** Leases the ready tickets in order, up to {@code room}, after promoting the delayed ones that fell due. Lock held. */
    private void take(int room, List<JobLease> got, List<Entry> lost) {
        promote(lost);
        for (int level = JobSpec.MAX_PRIORITY; level >= 0 && got.size() < room; ) {
            Entry e = levels[level].pollFirst();
            if (e == null) {
                level--;
                continue;
            }
            e.waiting = false;
            waiting--;
            e.deliveries++;
            Lease l = new Lease(e, e.deliveries);
            e.lease = l;
            got.add(l);
        }
    }

    /** Moves delayed entries that fell due to their level, or to {@code lost} if their deliveries are spent. Lock held. */
    private void promote(List<Entry> lost) {
        Instant now = clock.instant();
        Entry e;
        while ((e = delayed.peek()) != null && !e.due.isAfter(now)) {
            delayed.poll();
            if (e.deliveries >= maxDeliver) {
                e.waiting = false;
                waiting--;
                lost.add(e); // stays in byKey until the handler took it
            } else {
                e.due = null;
                levels[e.ticket.priority()].addLast(e);
            }
        }
    }

    /** The dead letter: the handler gets the ticket; it leaves the queue once the handler returned. Outside the lock. */
    private void handOver(Entry e) {
        LostHandler h = lostHandler;
        try {
            if (h != null) {
                h.lost(e.ticket, e.deliveries);
            }
            lock.lock();
            try {
                byKey.remove(e.key, e);
            } finally {
                lock.unlock();
            }
        } catch (Exception failed) {
            log.warn("the lost handler failed for job " + e.ticket.jobId() + "; it gets the ticket again in " + LOST_RETRY, failed);
            lock.lock();
            try {
                put(e, clock.instant().plus(LOST_RETRY));
            } finally {
                lock.unlock();
            }
        }
    }

    @Override
    public void withdraw(JobTicket ticket) {
        lock.lock();
        try {
            Entry e = byKey.get(key(ticket));
            if (e == null || !e.waiting) {
                return; // gone, or leased: it turns stale under the claim protocol
            }
            if (e.due != null) {
                delayed.remove(e);
            } else {
                levels[e.ticket.priority()].remove(e);
            }
            e.waiting = false;
            waiting--;
            byKey.remove(e.key);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long depth() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onLost(LostHandler handler) {
        this.lostHandler = handler;
    }

    /** One hand-out of an entry. */
    private final class Lease implements JobLease {
        private final Entry entry;
        private final int delivery;
        private boolean open = true; // guarded by the queue's lock

        Lease(Entry entry, int delivery) {
            this.entry = entry;
            this.delivery = delivery;
        }

        @Override
        public JobTicket ticket() {
            return entry.ticket;
        }

        @Override
        public int delivery() {
            return delivery;
        }

        /** Ends this lease; false if it was ended already or is not the entry's current one. Lock held. */
        private boolean end() {
            if (!open) {
                return false;
            }
            open = false;
            return entry.lease == this;
        }

        @Override
        public void complete() {
            lock.lock();
            try {
                if (end()) {
                    entry.lease = null;
                    byKey.remove(entry.key, entry);
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void release(Duration delay) {
            lock.lock();
            try {
                if (end()) {
                    entry.lease = null;
                    Instant now = clock.instant();
                    Instant due = delay == null || delay.isNegative() || delay.isZero() ? now : now.plus(delay);
                    putBack(due);
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public boolean isOpen() {
            lock.lock();
            try {
                return open;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void abandon() {
            lock.lock();
            try {
                if (end()) {
                    entry.lease = null;
                    putBack(clock.instant().plus(ackWait)); // lapses as a dead node's lease does
                }
            } finally {
                lock.unlock();
            }
        }

        /** Back as delayed until {@code due}, so that a spent entry reaches the lost handler on promotion. Lock held. */
        private void putBack(Instant due) {
            entry.seq = nextSeq++;
            entry.waiting = true;
            entry.due = due;
            waiting++;
            delayed.add(entry);
            arrived.signalAll();
        }

        @Override
        public String toString() {
            return "lease of " + entry.key + " (delivery " + delivery + ")";
        }
    }
}
