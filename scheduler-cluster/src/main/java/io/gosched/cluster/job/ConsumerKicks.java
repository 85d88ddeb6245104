package io.gosched.cluster.job;

import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Which consumers of the pull order a scan asks, and the puller's wait for a kick.
 *
 * <p>A no-wait fetch is a round trip to the server (a pull request and its answer, on a
 * subscription of its own) even from an empty consumer, and a scan that asked all eleven at every
 * kick and every pull wait was most of an idle or lightly loaded cluster's traffic: an idle node
 * sent 54 messages a second, and 35 a job at one job every 0.2 s; now 21 and 14
 * (bench/results/NOTES.md, "Which consumers a scan asks"; under a flood a scan's fetches come back
 * full and nothing changes). So a kick names the consumer its ticket waits on ({@link KickTarget}),
 * each consumer counts the kicks that named it, and a scan skips a consumer only when a fetch
 * found it with less than was asked for, i.e. empty, and no kick named it since; one not known
 * empty (at start, or after a fetch that came back full) is asked at every scan. Tickets can also come back
 * without a kick: a lease that lapsed on a dead node, a release by a node that did not kick (an
 * older version), a kick lost while a connection was down. For them every consumer is asked once
 * per {@link #FULL_SCAN_NANOS}, so such a ticket waits at most that long beyond its ack wait or
 * release.
 *
 * <p>A kick that arrives while its consumer is being fetched from keeps it named: the fetch marks
 * the consumer empty only as of the count it read before it started.
 *
 * <p>Thread-safe: every field is guarded by this object's monitor.
 */
final class ConsumerKicks {

    /** Every consumer is asked at least this often. */
    static final long FULL_SCAN_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Kicks received, whatever they named. */
    private long kicks;
    /** Per consumer of the pull order: kicks that named it. */
    private final long[] named;
    /**
     * Per consumer of the pull order: a fetch found it empty and no kick named it since. Starts
     * false (not known empty: asked), and a fetch that comes back with all it asked for leaves it
     * false, so a backlog nobody kicks for (tickets queued before this node started, or by an
     * intake node while no node ran jobs) is fetched at every scan, not once per full scan.
     */
    private final boolean[] empty;
    /** When the next scan asks every consumer ({@link System#nanoTime}). */
    private long fullScanDue;

    ConsumerKicks(int consumers) {
        this.named = new long[consumers];
        this.empty = new boolean[consumers];
        this.fullScanDue = System.nanoTime();
    }

    /** A kick arrived naming consumer {@code target} of the pull order, or {@link KickTarget#NOT_MINE} or {@link KickTarget#UNKNOWN}. */
    synchronized void kicked(int target) {
        kicks++;
        if (target >= 0) {
            named[target]++;
            empty[target] = false;
        } else if (target == KickTarget.UNKNOWN) {
            fullScanDue = System.nanoTime(); // a kick we cannot place: ask everyone
        }
        notifyAll();
    }

    /** Kicks so far: what {@link #awaitKick} waits to change. */
    synchronized long seen() {
        return kicks;
    }

    /** True if a scan starting at {@code now} asks every consumer; the next full scan is then due a period later. */
    synchronized boolean fullScan(long now) {
        boolean full = now - fullScanDue >= 0;
        if (full) {
            fullScanDue = now + FULL_SCAN_NANOS;
        }
        return full;
    }

    /**
     * Whether a scan asks consumer {@code i}: the kick count to hand to {@link #foundEmpty} if it
     * does, empty if it was found empty since its last kick (and the scan is not a full one).
     */
    synchronized OptionalLong ask(int i, boolean full) {
        return !full && empty[i] ? OptionalLong.empty() : OptionalLong.of(named[i]);
    }

    /** A fetch the server answered found consumer {@code i} empty, as of {@code seen} from {@link #ask}: a later kick keeps it named. */
    synchronized void foundEmpty(int i, long seen) {
        if (named[i] == seen) {
            empty[i] = true;
        }
    }

    /** How many consumers a scan would ask now without a full scan (for tests). */
    synchronized int namedConsumers() {
        int n = 0;
        for (int i = 0; i < named.length; i++) {
            n += empty[i] ? 0 : 1;
        }
        return n;
    }

    /** Waits until a kick after {@code seen} arrives, {@code deadline} ({@link System#nanoTime}) passes, or {@code open} turns false. */
    synchronized void awaitKick(long seen, long deadline, BooleanSupplier open) throws InterruptedException {
        long left = deadline - System.nanoTime();
        while (kicks == seen && left > 0 && open.getAsBoolean()) {
            TimeUnit.NANOSECONDS.timedWait(this, left);
            left = deadline - System.nanoTime();
        }
    }

    /** Wakes every waiting puller (the queue closes). */
    synchronized void wakeAll() {
        notifyAll();
    }
}
