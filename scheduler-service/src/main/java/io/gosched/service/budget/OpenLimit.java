package io.gosched.service.budget;

import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.service.error.RefusedException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A bound on requests that stay open (SSE streams, pending HTTP channel calls): at most
 * {@code max} at once, each charged {@code bytesEach} to the {@link MemoryBudget} for what it holds
 * while open (its connection, buffers, timers and callbacks, measured in docs/memory.md). Beyond
 * either bound the request is refused with 429 before anything is held for it.
 *
 * <p>Thread-safe and lock-free.
 */
public final class OpenLimit {

    private final String property;
    private final int max;
    private final String what;
    private final Retained kind;
    private final long bytesEach;
    private final MemoryBudget budget;
    private final AtomicInteger open = new AtomicInteger();

    /**
     * @param property   the property that sets {@code max}, named in refusals
     * @param what       what is counted, for people: {@code "SSE streams"}
     * @param kind       what the budget calls the bytes they hold
     * @param bytesEach  bytes one open request holds
     */
    public OpenLimit(String property, int max, String what, Retained kind, long bytesEach, MemoryBudget budget) {
        this.property = property;
        this.max = max;
        this.what = what;
        this.kind = kind;
        this.bytesEach = bytesEach;
        this.budget = budget;
    }

    public int open() {
        return open.get();
    }

    public int max() {
        return max;
    }

    public String property() {
        return property;
    }

    /** Takes one place or throws the 429; pair every success with one {@link #release}. */
    public void acquire() {
        acquire(false);
    }

    /**
     * As {@link #acquire}; with {@code freeing} the request's bytes are forced past a full memory
     * budget: a request that takes bytes out (a receive) must not be refused for want of room,
     * or a full budget could never drain. The count still bounds it.
     */
    public void acquire(boolean freeing) {
        int n = open.incrementAndGet();
        if (n > max) {
            open.decrementAndGet();
            budget.refused(property);
            throw new RefusedException(RefusedException.Reason.TOO_MANY_OPEN, max + " " + what + " are open, the limit (" + property
                    + "); close one or retry later", budget.retryAfter()).with("limit", property).with("max", max);
        }
        if (freeing) {
            budget.force(kind, bytesEach);
            return;
        }
        try {
            budget.charge(kind, bytesEach);
        } catch (RefusedException refused) {
            open.decrementAndGet();
            throw refused;
        }
    }

    public void release() {
        open.decrementAndGet();
        budget.release(kind, bytesEach);
    }

    /** {@code body} holding one place from subscription to its end, error or cancel; refused with the 429 as its error. */
    public <T> Flux<T> guard(Flux<T> body) {
        return Flux.defer(() -> {
            acquire();
            return body.doFinally(signal -> release());
        });
    }

    /** As {@link #guard(Flux)} for one answer. */
    public <T> Mono<T> guard(Mono<T> body) {
        return guard(body, false);
    }

    /** As {@link #guard(Flux)} for one answer; {@code freeing}: see {@link #acquire(boolean)}. */
    public <T> Mono<T> guard(Mono<T> body, boolean freeing) {
        return Mono.defer(() -> {
            acquire(freeing);
            return body.doFinally(signal -> release());
        });
    }
}
