package io.gosched.service.budget;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import io.gosched.service.ServiceProperties;
import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;

/**
 * The one memory budget for everything the service holds on behalf of clients: values in named
 * channels and pending HTTP sends, jobs' requests, goroutine stacks and channels, finished jobs'
 * results and errors, idempotency entries, open streams and pending channel calls. Bytes are
 * charged as they enter (estimated by {@link JsonSize} and the constants of their holders) and
 * released as they leave; {@link Retained} says what holds them.
 *
 * <h2>The rules</h2>
 * <ul>
 * <li>New work is charged with {@link #tryCharge}/{@link #charge}: it fits or is refused (429
 *     with {@code Retry-After}, a problem naming the budget, its size and what holds it).</li>
 * <li>Before refusing, the budget asks its {@link Reclaimer}s (the job store: finished jobs,
 *     oldest first) to free what is missing.</li>
 * <li>What was already accepted is never refused: it is {@link #force forced} in (a finished
 *     job's result, a value put back after its receiver went away), which may take the budget
 *     over its size for a moment; reclaimers are asked at once, and new work is refused until
 *     enough is released.</li>
 * <li>{@link #move} changes what holds bytes without changing the total (a queued job starts).</li>
 * <li>Whoever waits for room (a job's send on a full share, a job waiting to start) registers
 *     {@link #whenFreed} before its attempt, so a release between the attempt and the wait is
 *     never missed.</li>
 * </ul>
 *
 * <p>A store of jobs or a home of channels other than the in-memory ones (cluster mode) reuses
 * this class as it is: it charges what it keeps in this JVM's heap under the same kinds.
 *
 * <p>Thread-safe and lock-free: one atomic total (compare-and-set against the size), one atomic
 * per kind for the gauges and the problem's {@code heldBy}.
 */
public final class MemoryBudget {

    /** The budget's property. */
    public static final String MAX_RETAINED_BYTES = "gosched.api.limits.max-retained-bytes";
    /** One named channel's share of the budget. */
    public static final String MAX_CHANNEL_BYTES = "gosched.api.limits.max-channel-bytes";
    /** One job's share of the budget. */
    public static final String MAX_JOB_BYTES = "gosched.api.limits.max-job-bytes";

    /**
     * The default budget as a fraction of the max heap ({@code Runtime.maxMemory()}). Measured
     * (docs/memory.md "Choosing the default"): the service's own live heap, the garbage of
     * requests in flight and G1's room to copy live objects need the other half on a 256 MiB heap.
     */
    public static final double DEFAULT_HEAP_FRACTION = 0.5;
    /** A configured budget above this fraction of the max heap stops the start: the heap would fill before the budget refuses. */
    public static final double MAX_HEAP_FRACTION = 0.8;
    /** Default share of one named channel: an eighth of the budget. */
    public static final int DEFAULT_CHANNEL_SHARE = 8;
    /** Default share of one job: a quarter of the budget. */
    public static final int DEFAULT_JOB_SHARE = 4;

    /** Frees bytes under pressure (evicting finished jobs); returns how many it released. */
    @FunctionalInterface
    public interface Reclaimer {
        /** @param wanted bytes missing; releasing more is allowed, less is fine when nothing is left */
        long reclaim(long wanted);
    }

    /**
     * The budget's sizes after defaults: the whole, and one channel's and one job's share.
     *
     * @throws IllegalStateException naming the property when a size does not fit the heap or the budget
     */
    public record Sizes(long maxRetainedBytes, long maxChannelBytes, long maxJobBytes) {

        public static Sizes of(ServiceProperties.Limits limits, long maxHeap) {
            long budget = limits.maxRetainedBytes() != null ? limits.maxRetainedBytes() : (long) (maxHeap * DEFAULT_HEAP_FRACTION);
            if (budget > maxHeap * MAX_HEAP_FRACTION) {
                throw new IllegalStateException(MAX_RETAINED_BYTES + "=" + budget + " is more than " + (int) (MAX_HEAP_FRACTION * 100)
                        + "% of the max heap (" + maxHeap + " bytes, -Xmx): the heap would run out before the budget refuses"
                        + " anything; lower it or give the JVM a larger -Xmx");
            }
            long channel = limits.maxChannelBytes() != null ? limits.maxChannelBytes() : budget / DEFAULT_CHANNEL_SHARE;
            long job = limits.maxJobBytes() != null ? limits.maxJobBytes() : budget / DEFAULT_JOB_SHARE;
            if (channel > budget) {
                throw new IllegalStateException(MAX_CHANNEL_BYTES + "=" + channel + " is larger than the whole budget ("
                        + MAX_RETAINED_BYTES + "=" + budget + ")");
            }
            if (job > budget) {
                throw new IllegalStateException(MAX_JOB_BYTES + "=" + job + " is larger than the whole budget ("
                        + MAX_RETAINED_BYTES + "=" + budget + ")");
            }
            return new Sizes(budget, channel, job);
        }
    }

    private static final Retained[] KINDS = Retained.values();

    private final long max;
    private final Duration retryAfter;
    private final BudgetMeters metrics;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLongArray held = new AtomicLongArray(KINDS.length);
    private final List<Reclaimer> reclaimers = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<Runnable> freedListeners = new ConcurrentLinkedQueue<>();

    /**
     * @param maxBytes    the budget's size
     * @param retryAfter  what {@code Retry-After} says on a refusal
     * @param metrics     where refusals are counted
     */
    public MemoryBudget(long maxBytes, Duration retryAfter, BudgetMeters metrics) {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("budget must be positive: " + maxBytes);
        }
        this.max = maxBytes;
        this.retryAfter = retryAfter;
        this.metrics = metrics;
    }

    public long max() {
        return max;
    }

    public long used() {
        return used.get();
    }

    public long held(Retained kind) {
        return held.get(kind.ordinal());
    }

    public Duration retryAfter() {
        return retryAfter;
    }

    /** Counts a refusal by a bound that belongs to this budget: a share, an open-request limit, one job's share. */
    public void refused(String property) {
        metrics.budgetRefused(shortName(property));
    }

    /** Bytes held by each kind, every kind listed, in declaration order. */
    public Map<String, Long> heldBy() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Retained k : KINDS) {
            m.put(k.tag(), held(k));
        }
        return m;
    }

    /** Registers a reclaimer the budget asks, in registration order, before it refuses. */
    public void addReclaimer(Reclaimer r) {
        reclaimers.add(r);
    }

    /**
     * Charges {@code bytes} to {@code kind} if they fit, after asking the reclaimers for what is
     * missing. Can be called by any thread, a goroutine included; never blocks.
     */
    public boolean tryCharge(Retained kind, long bytes) {
        if (tryAdd(bytes)) {
            held.addAndGet(kind.ordinal(), bytes);
            return true;
        }
        if (reclaim(used.get() + bytes - max) && tryAdd(bytes)) {
            held.addAndGet(kind.ordinal(), bytes);
            return true;
        }
        return false;
    }

    /**
     * Charges {@code bytes} to {@code kind} only from the room left, never asking the reclaimers:
     * for what the service can do without (a diagnostic snapshot), which must not evict a client's
     * finished jobs to make room for itself.
     */
    public boolean tryChargeSpare(Retained kind, long bytes) {
        if (tryAdd(bytes)) {
            held.addAndGet(kind.ordinal(), bytes);
            return true;
        }
        return false;
    }

    /** As {@link #tryCharge}, but a refusal is thrown: 429 naming the budget. */
    public void charge(Retained kind, long bytes) {
        if (!tryCharge(kind, bytes)) {
            throw refusal(kind, bytes);
        }
    }

    /** Charges bytes that were already accepted and cannot be refused; asks the reclaimers if that went over. */
    public void force(Retained kind, long bytes) {
        long now = used.addAndGet(bytes);
        held.addAndGet(kind.ordinal(), bytes);
        if (now > max) {
            reclaim(now - max);
        }
    }

    /** Returns bytes; wakes whoever registered {@link #whenFreed}. */
    public void release(Retained kind, long bytes) {
        if (bytes == 0) {
            return;
        }
        held.addAndGet(kind.ordinal(), -bytes);
        used.addAndGet(-bytes);
        if (!freedListeners.isEmpty()) {
            Runnable r;
            while ((r = freedListeners.poll()) != null) {
                r.run();
            }
        }
    }

    /** Moves bytes from one holder to another; the total stays. */
    public void move(Retained from, Retained to, long bytes) {
        if (from != to && bytes != 0) {
            held.addAndGet(to.ordinal(), bytes);
            held.addAndGet(from.ordinal(), -bytes);
        }
    }

    /**
     * Runs {@code listener} once, on the thread of the next release. Register before the attempt
     * that may fail: a release that came before the registration is seen by the attempt, one
     * after it runs the listener. Listeners must be quick and must not block.
     */
    public void whenFreed(Runnable listener) {
        freedListeners.add(listener);
    }

    /** The refusal of a request that needs {@code bytes} more than the budget has; counted. */
    public ServiceException refusal(Retained kind, long bytes) {
        refused(MAX_RETAINED_BYTES);
        long u = used.get();
        StringBuilder holders = new StringBuilder();
        for (Retained k : KINDS) {
            long h = held(k);
            if (h > 0) {
                holders.append(holders.isEmpty() ? "" : ", ").append(k.tag()).append(' ').append(h);
            }
        }
        return new RefusedException(RefusedException.Reason.MEMORY_BUDGET, "the service's memory budget (" + MAX_RETAINED_BYTES
                        + " = " + max + " bytes) has " + Math.max(0, max - u) + " bytes free and this request needs " + bytes + " ("
                        + kind.description() + "); held by: " + (holders.isEmpty() ? "nothing" : holders) + ". Receive values or let"
                        + " jobs finish, then retry", retryAfter)
                .with("budget", MAX_RETAINED_BYTES).with("budgetBytes", max).with("usedBytes", u).with("requestedBytes", bytes)
                .with("kind", kind.tag()).with("heldBy", heldBy());
    }

    /** {@code gosched.api.limits.max-retained-bytes} to {@code max-retained-bytes}: the tag of the refusal counter. */
    public static String shortName(String property) {
        return property.substring(property.lastIndexOf('.') + 1);
    }

    private boolean tryAdd(long bytes) {
        long u;
        do {
            u = used.get();
            if (u + bytes > max) {
                return false;
            }
        } while (!used.compareAndSet(u, u + bytes));
        return true;
    }

    /** Asks each reclaimer in turn until {@code wanted} bytes came back; true if any did. */
    private boolean reclaim(long wanted) {
        boolean any = false;
        for (Reclaimer r : reclaimers) {
            if (wanted <= 0) {
                break;
            }
            long got = r.reclaim(wanted);
            any |= got > 0;
            wanted -= got;
        }
        return any;
    }
}
