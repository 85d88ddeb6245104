package io.gosched.sync;

import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Select;
import java.util.Objects;

/**
 * A weighted semaphore, Go's {@code golang.org/x/sync/semaphore.Weighted}: bounds concurrent
 * access to a resource of size n; each caller asks for the weight it needs.
 *
 * <p>Waiters are served strictly first come, first served: a request that does not fit blocks
 * every request behind it, even smaller ones that would fit (so a large request, say a writer
 * taking the whole size, is never starved by a stream of small ones), and {@link #tryAcquire}
 * fails while anyone waits. A waiting {@link #acquire} gives up when its context is done and
 * leaves the semaphore as it found it. Waiting parks only the goroutine in a goroutine, the
 * thread on a platform thread.
 *
 * <p>Go: golang.org/x/sync/semaphore
 */
public final class Semaphore {
    /*
     * Invariants (under mu): 0 <= cur <= size; the waiters list is FIFO; its head is a waiter
     * whose request does not fit now (notifyWaiters admits every head that fits, in order); a
     * waiter leaves the list exactly once, either admitted by notifyWaiters (which adds its n to
     * cur and closes its ready channel, both under mu) or removed by its own cancelled acquire.
     */
    private final long size;
    private long cur;                  // guarded by mu
    private final Mutex mu = new Mutex();
    private Waiter head;               // guarded by mu
    private Waiter tail;               // guarded by mu

    private static final class Waiter {
        final long n;
        final Chan<Object> ready = Chan.make(); // closed when the semaphore is acquired
        Waiter prev;
        Waiter next;

        Waiter(long n) {
            this.n = n;
        }
    }

    /** A semaphore with the given maximum combined weight. Go: semaphore.NewWeighted */
    public Semaphore(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("semaphore size must not be negative: " + n);
        }
        this.size = n;
    }

    /**
     * Acquires weight n, waiting until it is available or ctx is done. A context that is already
     * done makes it fail even when the weight is free (its cancellation happened before this
     * call); a request larger than the size can never succeed and just waits for ctx, without
     * holding up others.
     *
     * @throws RuntimeException ctx's error ({@link Context#err()}) when it gave up; the
     *     semaphore is then unchanged
     * @throws IllegalArgumentException when n is negative
     *     Go: semaphore.Weighted.Acquire
     */
    public void acquire(Context ctx, long n) {
        Objects.requireNonNull(ctx, "ctx");
        checkWeight(n);
        Chan<?> done = ctx.done();
        mu.lock();
        if (done.isClosed()) {
            // ctx becoming done happened before acquiring: fail even if we could acquire without blocking.
            mu.unlock();
            throw errOf(ctx);
        }
        if (size - cur >= n && head == null) {
            // We hold mu and have not synchronized since checking done: if ctx becomes done now,
            // that happened concurrently with this call, so acquiring is correct.
            cur += n;
            mu.unlock();
            return;
        }
        if (n > size) {
            // Don't make other acquire calls block on one that is doomed to fail.
            mu.unlock();
            done.recv();
            throw errOf(ctx);
        }
        Waiter w = new Waiter(n);
        pushBackLocked(w);
        mu.unlock();

        if (Select.select(Select.recv(done), Select.recv(w.ready)).index() == 0) {
            mu.lock();
            if (w.ready.isClosed()) {
                // Acquired after we were cancelled: pretend we did not, and put the weight back.
                cur -= n;
                notifyWaitersLocked();
            } else {
                boolean isFront = head == w;
                removeLocked(w);
                // If we were at the front and there is weight left, the waiters behind may fit now.
                if (isFront && size > cur) {
                    notifyWaitersLocked();
                }
            }
            mu.unlock();
            throw errOf(ctx);
        }
        // Acquired. Check that ctx is not done already (it may have been closed at the same time).
        if (done.isClosed()) {
            release(n);
            throw errOf(ctx);
        }
    }

    /**
     * Acquires weight n if it is available now and nobody waits; never blocks. Returns whether
     * it acquired; on false the semaphore is unchanged.
     * Go: semaphore.Weighted.TryAcquire
     */
    public boolean tryAcquire(long n) {
        checkWeight(n);
        mu.lock();
        boolean success = size - cur >= n && head == null;
        if (success) {
            cur += n;
        }
        mu.unlock();
        return success;
    }

    /**
     * Releases weight n and admits the waiters at the front that now fit.
     *
     * @throws IllegalStateException when more is released than is held ("semaphore: released
     *     more than held"); the semaphore is then unchanged
     *     Go: semaphore.Weighted.Release
     */
    public void release(long n) {
        checkWeight(n);
        mu.lock();
        if (n > cur) {
            mu.unlock();
            throw new IllegalStateException("semaphore: released more than held (releasing " + n + ", holding " + cur + ")");
        }
        cur -= n;
        notifyWaitersLocked();
        mu.unlock();
    }

    /** mu must be held. Go: semaphore.Weighted.notifyWaiters */
    private void notifyWaitersLocked() {
        assert mu.isLocked();
        for (Waiter w = head; w != null; w = head) {
            if (size - cur < w.n) {
                // Not enough for the next waiter. Admitting a smaller one behind it would let a
                // stream of small requests starve a large one (a writer taking the whole size
                // behind readers taking 1): leave everyone behind it blocked.
                break;
            }
            cur += w.n;
            removeLocked(w);
            w.ready.close();
        }
    }

    /** mu must be held. */
    private void pushBackLocked(Waiter w) {
        assert mu.isLocked();
        w.prev = tail;
        if (tail == null) {
            head = w;
        } else {
            tail.next = w;
        }
        tail = w;
    }

    /** mu must be held. */
    private void removeLocked(Waiter w) {
        assert mu.isLocked();
        if (w.prev == null) {
            head = w.next;
        } else {
            w.prev.next = w.next;
        }
        if (w.next == null) {
            tail = w.prev;
        } else {
            w.next.prev = w.prev;
        }
        w.prev = null;
        w.next = null;
    }

    private static void checkWeight(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("semaphore weight must not be negative: " + n);
        }
    }

    /** The error of a done context (never null, even for a foreign Context that reports none). */
    private static RuntimeException errOf(Context ctx) {
        RuntimeException e = ctx.err();
        return e != null ? e : Context.CANCELED;
    }

    /** Weight held now; a snapshot, for tests and diagnostics. */
    long held() {
        mu.lock();
        try {
            return cur;
        } finally {
            mu.unlock();
        }
    }

    /** Acquires waiting now; a snapshot, for tests and diagnostics. */
    int waiters() {
        mu.lock();
        try {
            int k = 0;
            for (Waiter w = head; w != null; w = w.next) {
                k++;
            }
            return k;
        } finally {
            mu.unlock();
        }
    }
}
