package io.gosched.service.budget;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.gosched.service.error.RefusedException;
import io.gosched.service.error.ServiceException;

/**
 * One holder's share of the {@link MemoryBudget} (a named channel's values), so that one holder
 * cannot take the whole budget: a charge must fit both the share and the budget.
 *
 * <p>Thread-safe and lock-free.
 */
public final class ByteShare {

    /** The result of {@link #tryCharge}. */
    public enum Outcome { CHARGED, SHARE_FULL, BUDGET_FULL }

    private final MemoryBudget budget;
    private final String property;
    private final long max;
    private final String holder;
    private final AtomicLong used = new AtomicLong();

    /**
     * @param property  the property that sets {@code max}, named in refusals
     * @param holder    who holds the share, for people: {@code channel 'orders'}
     */
    public ByteShare(MemoryBudget budget, String property, long max, String holder) {
        this.budget = budget;
        this.property = property;
        this.max = max;
        this.holder = holder;
    }

    public MemoryBudget budget() {
        return budget;
    }

    public long max() {
        return max;
    }

    public long used() {
        return used.get();
    }

    /** Charges {@code bytes} to the share and to the budget as {@code kind}, or neither. */
    public Outcome tryCharge(Retained kind, long bytes) {
        long u;
        do {
            u = used.get();
            if (u + bytes > max) {
                return Outcome.SHARE_FULL;
            }
        } while (!used.compareAndSet(u, u + bytes));
        if (budget.tryCharge(kind, bytes)) {
            return Outcome.CHARGED;
        }
        used.addAndGet(-bytes);
        return Outcome.BUDGET_FULL;
    }

    /** As {@link #tryCharge}; a refusal is thrown, naming the share or the budget, whichever was full. */
    public void charge(Retained kind, long bytes) {
        switch (tryCharge(kind, bytes)) {
            case CHARGED -> { }
            case SHARE_FULL -> throw refusal(bytes);
            case BUDGET_FULL -> throw budget.refusal(kind, bytes);
        }
    }

    /** Charges bytes that were already accepted; see {@link MemoryBudget#force}. */
    public void force(Retained kind, long bytes) {
        used.addAndGet(bytes);
        budget.force(kind, bytes);
    }

    public void release(Retained kind, long bytes) {
        used.addAndGet(-bytes);
        budget.release(kind, bytes);
    }

    public void move(Retained from, Retained to, long bytes) {
        budget.move(from, to, bytes);
    }

    private ServiceException refusal(long bytes) {
        budget.refused(property);
        long u = used.get();
        return new RefusedException(RefusedException.Reason.MEMORY_BUDGET, holder + " holds " + u + " of its " + max + " bytes ("
                        + property + ") and this request needs " + bytes + " more; receive from it, then retry", budget.retryAfter())
                .with("budget", property).with("budgetBytes", max).with("usedBytes", u).with("requestedBytes", bytes)
                .with("heldBy", Map.of(holder, u));
    }
}
