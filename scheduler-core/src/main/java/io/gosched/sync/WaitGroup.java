package io.gosched.sync;

import io.gosched.runtime.Sema;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Waits for a collection of goroutines (or threads) to finish, Go's {@code sync.WaitGroup}: the
 * starter calls {@link #add(int)} before starting each, each calls {@link #done()} when finished,
 * and {@link #await()} blocks until the counter is zero. A WaitGroup may be reused once every
 * {@code await} of the previous round has returned.
 *
 * <p>Go: sync/waitgroup.go
 */
public final class WaitGroup {
    /*
     * state: one long, updated as a whole so that counter and waiters change atomically together.
     *
     *   63                             32 31                              0
     *  +--------------------------------+---------------------------------+
     *  |   counter (signed 32-bit)      |   waiters (unsigned 32-bit)     |
     *  +--------------------------------+---------------------------------+
     *
     * Go 1.25 reserves one more low bit for synctest bubbles; there is no synctest here.
     */
    static final int COUNTER_SHIFT = 32;
    static final long WAITERS_MASK = 0xFFFF_FFFFL;

    static int counter(long state) {
        return (int) (state >> COUNTER_SHIFT);
    }

    static int waiters(long state) {
        return (int) (state & WAITERS_MASK);
    }

    static long pack(int counter, int waiters) {
        return ((long) counter << COUNTER_SHIFT) | (waiters & WAITERS_MASK);
    }

    private final AtomicLong state = new AtomicLong();
    private final Sema sema = new Sema(0, "sync.WaitGroup.Wait");

    /**
     * Adds delta (possibly negative) to the counter; at zero, releases every waiter.
     *
     * @throws IllegalStateException when the counter would go negative ("sync: negative WaitGroup
     *     counter"), or on an add from zero racing with a wait ("sync: WaitGroup misuse: Add called
     *     concurrently with Wait")
     *     Go: sync/waitgroup.go WaitGroup.Add
     */
    public void add(int delta) {
        long s = state.addAndGet((long) delta << COUNTER_SHIFT);
        int v = counter(s);
        int w = waiters(s);
        if (v < 0) {
            state.addAndGet(-((long) delta << COUNTER_SHIFT)); // leave the group as it was; the caller is broken
            throw new IllegalStateException("sync: negative WaitGroup counter");
        }
        if (w != 0 && delta > 0 && v == delta) {
            throw new IllegalStateException("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        if (v > 0 || w == 0) {
            return;
        }
        // This goroutine has set counter to 0 when waiters > 0. Now there can't be concurrent
        // mutations of state: Adds must not happen concurrently with Wait, Wait does not increment
        // waiters if it sees counter == 0. Still do a cheap sanity check to detect misuse.
        if (state.get() != s) {
            throw new IllegalStateException("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        // Reset waiters count to 0.
        state.set(0);
        for (; w != 0; w--) {
            sema.release(false);
        }
    }

    /** Decrements the counter by one. Go: sync/waitgroup.go WaitGroup.Done */
    public void done() {
        add(-1);
    }

    /**
     * Blocks until the counter is zero.
     *
     * @throws IllegalStateException when the group is reused (added to) before this wait returned
     *     Go: sync/waitgroup.go WaitGroup.Wait
     */
    public void await() {
        for (;;) {
            long s = state.get();
            if (counter(s) == 0) {
                // Counter is 0, no need to wait.
                return;
            }
            // Increment waiters count.
            if (state.compareAndSet(s, s + 1)) {
                sema.acquire(false);
                if (state.get() != 0) {
                    throw new IllegalStateException("sync: WaitGroup is reused before previous Wait has returned");
                }
                return;
            }
        }
    }

    /**
     * Go 1.25's WaitGroup.Go: add(1), run f in a new goroutine, done() when f returns normally or
     * ends its goroutine by {@code Go.goexit()}. When f throws, done() is not called and the
     * exception is re-raised, uncaught, in f's goroutine, as Go re-panics: under the default
     * {@code PanicPolicy.CRASH} the runtime stops before {@code await()} can return as if all
     * went well. Called from a goroutine (it uses {@code Go.go}); from a platform thread use
     * add/done around {@code GoRuntime.go}.
     */
    public void go(Runnable f) {
        add(1);
        io.gosched.runtime.Go.go(() -> {
            try {
                f.run();
            } catch (io.gosched.runtime.Go.Goexit exit) {
                done(); // Goexit is not a panic: the goroutine ended, abruptly but normally
                throw exit;
            }
            done();
        });
    }

    /** The counter now; a snapshot. */
    int count() {
        return counter(state.get());
    }
}
