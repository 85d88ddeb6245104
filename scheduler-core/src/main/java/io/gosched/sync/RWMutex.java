package io.gosched.sync;

import io.gosched.runtime.Sema;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reader/writer mutual exclusion lock, Go's {@code sync.RWMutex}: any number of readers or one
 * writer. A writer that calls {@link #lock()} blocks new readers until it has had its turn, so a
 * reader must not take the read lock recursively (a writer waiting in between deadlocks it).
 * Usable from goroutines and platform threads; not owned by whoever locked it.
 *
 * <p>Go: sync/rwmutex.go
 */
public final class RWMutex {
    /** Go's rwmutexMaxReaders: a pending writer subtracts this from readerCount to announce itself. */
    static final int RWMUTEX_MAX_READERS = 1 << 30;

    private final Mutex w = new Mutex();              // held if there are pending writers
    private final Sema writerSem = new Sema(0, "sync.RWMutex.Lock");       // for writers to wait for completing readers
    private final Sema readerSem = new Sema(0, "sync.RWMutex.RLock");       // for readers to wait for completing writers
    private final AtomicInteger readerCount = new AtomicInteger(); // number of pending readers (negative: a writer is pending)
    private final AtomicInteger readerWait = new AtomicInteger();  // number of departing readers

    /** Takes the read lock; waits while a writer holds or waits for the lock. Go: sync/rwmutex.go RWMutex.RLock */
    public void rlock() {
        if (readerCount.incrementAndGet() < 0) {
            // A writer is pending, wait for it.
            readerSem.acquire(false);
        }
    }

    /** Takes the read lock if that needs no waiting. Go: sync/rwmutex.go RWMutex.TryRLock */
    public boolean tryRLock() {
        for (;;) {
            int c = readerCount.get();
            if (c < 0) {
                return false;
            }
            if (readerCount.compareAndSet(c, c + 1)) {
                return true;
            }
        }
    }

    /**
     * Releases one read lock.
     *
     * @throws IllegalStateException when not read-locked (Go: fatal "sync: RUnlock of unlocked RWMutex")
     *     Go: sync/rwmutex.go RWMutex.RUnlock
     */
    public void runlock() {
        int r = readerCount.decrementAndGet();
        if (r < 0) {
            // Outlined slow-path to allow the fast-path to be inlined.
            rUnlockSlow(r);
        }
    }

    private void rUnlockSlow(int r) {
        if (r + 1 == 0 || r + 1 == -RWMUTEX_MAX_READERS) {
            readerCount.incrementAndGet();
            throw new IllegalStateException("sync: RUnlock of unlocked RWMutex");
        }
        // A writer is pending.
        if (readerWait.decrementAndGet() == 0) {
            // The last reader unblocks the writer.
            writerSem.release(false);
        }
    }

    /** Takes the write lock, waiting for the active readers and any writer. Go: sync/rwmutex.go RWMutex.Lock */
    public void lock() {
        // First, resolve competition with other writers.
        w.lock();
        // Announce to readers there is a pending writer.
        int r = readerCount.addAndGet(-RWMUTEX_MAX_READERS) + RWMUTEX_MAX_READERS;
        // Wait for active readers.
        if (r != 0 && readerWait.addAndGet(r) != 0) {
            writerSem.acquire(false);
        }
    }

    /** Takes the write lock if that needs no waiting. Go: sync/rwmutex.go RWMutex.TryLock */
    public boolean tryLock() {
        if (!w.tryLock()) {
            return false;
        }
        if (!readerCount.compareAndSet(0, -RWMUTEX_MAX_READERS)) {
            w.unlock();
            return false;
        }
        return true;
    }

    /**
     * Releases the write lock.
     *
     * @throws IllegalStateException when not write-locked (Go: fatal "sync: Unlock of unlocked RWMutex")
     *     Go: sync/rwmutex.go RWMutex.Unlock
     */
    public void unlock() {
        // Announce to readers there is no active writer.
        int r = readerCount.addAndGet(RWMUTEX_MAX_READERS);
        if (r >= RWMUTEX_MAX_READERS) {
            readerCount.addAndGet(-RWMUTEX_MAX_READERS);
            throw new IllegalStateException("sync: Unlock of unlocked RWMutex");
        }
        // Unblock blocked readers, if any.
        for (int i = 0; i < r; i++) {
            readerSem.release(false);
        }
        // Allow other writers to proceed.
        w.unlock();
    }
}
