package io.gosched.service.http;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.gosched.context.Context;
import io.gosched.runtime.Select;
import io.gosched.sync.Semaphore;
import io.gosched.time.Time;

/**
 * One target's limits, kept with the runtime's own parts so that a call waiting for its turn is a
 * parked goroutine, not a blocked thread: the concurrency limit is the runtime's weighted semaphore
 * (Go's {@code x/sync/semaphore}: first come, first served, and a waiter whose context ends
 * leaves it as it found it), and the rate is paced with the runtime's timers ({@code time.After}), each call
 * reserving the next start time as Go's {@code x/time/rate} limiter does with a burst of one.
 *
 * <p>Thread-safe; {@link #acquire} runs in a goroutine.
 */
final class TargetLimits {

    static final TargetLimits NONE = new TargetLimits(0, 0);

    /** null: no concurrency limit. One unit per call in flight. */
    private final Semaphore slots;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Nanoseconds between two starts; 0: no rate limit. */
    private final long intervalNanos;
    /** System.nanoTime at which the next call may start (only moves forward). */
    private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);

    TargetLimits(int maxConcurrent, double maxPerSecond) {
        this.slots = maxConcurrent > 0 ? new Semaphore(maxConcurrent) : null;
        this.intervalNanos = maxPerSecond > 0 ? Math.max(1, (long) (1e9 / maxPerSecond)) : 0;
    }

    /**
     * Waits for a slot and then for the call's turn, or until {@code ctx} ends.
     *
     * @return true with a slot held (give it back with {@link #release}); false if {@code ctx} ended first
     */
    boolean acquire(Context ctx) {
        if (slots != null) {
            try {
                slots.acquire(ctx, 1);
            } catch (RuntimeException ctxEnded) {
                return false; // the semaphore is as it was
            }
            inFlight.incrementAndGet();
        }
        if (intervalNanos > 0) {
            long wait = reserve(System.nanoTime());
            if (wait > 0 && Select.select(Select.recv(Time.after(Duration.ofNanos(wait))), Select.recv(ctx.done()))
                    .index() != 0) {
                release();
                return false;
            }
        }
        return true;
    }

    /** Gives back the slot {@link #acquire} took. */
    void release() {
        if (slots != null) {
            inFlight.decrementAndGet();
            slots.release(1);
        }
    }

    /** Reserves the next start at or after {@code now}; how long to wait for it, in nanoseconds. */
    long reserve(long now) {
        while (true) {
            long n = next.get();
            long start = n == Long.MIN_VALUE || n - now < 0 ? now : n;
            if (next.compareAndSet(n, start + intervalNanos)) {
                return start - now;
            }
        }
    }

    /** Calls in flight now (0 without a concurrency limit): for tests and meters. */
    int inFlight() {
        return inFlight.get();
    }
}
