package io.gosched.sync;

import io.gosched.runtime.Bubble;
import io.gosched.runtime.Go;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Sema;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Waits for a collection of goroutines (or threads) to finish, Go's {@code sync.WaitGroup}: the
 * starter calls {@link #add(int)} before starting each, each calls {@link #done()} when finished,
 * and {@link #await()} blocks until the counter is zero. A WaitGroup may be reused once every
 * {@code await} of the previous round has returned.
 *
 * <p>In a synctest bubble (Go 1.25): the first {@code add} from inside a bubble ties the group to
 * that bubble until its counter is back at zero, and a wait on it from a member is then durable.
 * Adds to a tied group from another bubble, or from outside while it is tied (and adds from a
 * bubble to a group already counting for outside), throw Go's fatal errors as
 * IllegalStateException. A group used outside bubbles only is untouched: one load of the
 * caller's bubble per add.
 *
 * <p>Go: sync/waitgroup.go
 */
public final class WaitGroup {
    /*
     * state: one long, updated as a whole so that counter and waiters change atomically together.
     *
     *   63                             32  31  30                          0
     *  +--------------------------------+---+------------------------------+
     *  |   counter (signed 32-bit)      | B |  waiters (unsigned 31-bit)   |
     *  +--------------------------------+---+------------------------------+
     *
     * B: an add from inside a synctest bubble counts in this round (Go 1.25 waitGroupBubbleFlag);
     * the bubble it counts for is in {@code bubble}.
     */
    static final int COUNTER_SHIFT = 32;
    static final long BUBBLE_FLAG = 0x8000_0000L;
    static final long WAITERS_MASK = 0x7FFF_FFFFL;

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
    /** The bubble this round's adds came from, while B is set; null otherwise. Go: the bubble special. */
    private volatile Bubble bubble;

    private static final VarHandle BUBBLE;

    static {
        try {
            BUBBLE = MethodHandles.lookup().findVarHandle(WaitGroup.class, "bubble", Bubble.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final String MULTIPLE_BUBBLES = "sync: WaitGroup.Add called from multiple synctest bubbles";
    static final String INSIDE_AND_OUTSIDE = "sync: WaitGroup.Add called from inside and outside synctest bubble";

    /**
     * Adds delta (possibly negative) to the counter; at zero, releases every waiter.
     *
     * @throws IllegalStateException when the counter would go negative ("sync: negative WaitGroup
     *     counter"), or on an add from zero racing with a wait ("sync: WaitGroup misuse: Add called
     *     concurrently with Wait"); in a synctest bubble, Go's fatal errors for a group moved
     *     between bubbles ("sync: WaitGroup.Add called from multiple synctest bubbles") or used from
     *     inside and outside one ("sync: WaitGroup.Add called from inside and outside synctest
     *     bubble") while its counter is not back at zero
     *     Go: sync/waitgroup.go WaitGroup.Add
     */
    public void add(int delta) {
        Bubble mine = Bubble.current();
        boolean bubbled = false;
        if (mine != null) {
            Bubble tied = (Bubble) BUBBLE.compareAndExchange(this, null, mine);
            if (tied != null && tied != mine) {
                throw new IllegalStateException(MULTIPLE_BUBBLES);
            }
            bubbled = true;
            long before = state.getAndUpdate(x -> x | BUBBLE_FLAG);
            if (before != 0 && (before & BUBBLE_FLAG) == 0) {
                state.getAndUpdate(x -> x & ~BUBBLE_FLAG); // leave the group as it was: it counts for outside
                if (tied == null) {
                    bubble = null;
                }
                throw new IllegalStateException(INSIDE_AND_OUTSIDE); // counting for outside already
            }
        }
        long s = state.addAndGet((long) delta << COUNTER_SHIFT);
        if ((s & BUBBLE_FLAG) != 0 && !bubbled) {
            state.addAndGet(-((long) delta << COUNTER_SHIFT));
            throw new IllegalStateException(INSIDE_AND_OUTSIDE); // counting for a bubble
        }
        int v = counter(s);
        int w = waiters(s);
        if (v < 0) {
            state.addAndGet(-((long) delta << COUNTER_SHIFT)); // leave the group as it was; the caller is broken
            throw new IllegalStateException("sync: negative WaitGroup counter");
        }
        if (w != 0 && delta > 0 && v == delta) {
            throw new IllegalStateException("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        if (v > 0) {
            return;
        }
        if (w == 0) {
            // Back at zero with nobody waiting: the round is over, so the group no longer counts
            // for a bubble and may be used from another one (Go: TestWaitGroupMovedBetweenBubbles-
            // WithZeroCount). Only a state still exactly "B, zero" is cleared.
            if (bubbled && state.compareAndSet(BUBBLE_FLAG, 0)) {
                bubble = null;
            }
            return;
        }
        // This goroutine has set counter to 0 when waiters > 0. Now there can't be concurrent
        // mutations of state: Adds must not happen concurrently with Wait, Wait does not increment
        // waiters if it sees counter == 0. Still do a cheap sanity check to detect misuse.
        if (state.get() != s) {
            throw new IllegalStateException("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        // Reset waiters count to 0; the round is over, and so is any tie to a bubble.
        state.set(0);
        if (bubbled) {
            bubble = null;
        }
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
                // Durable only for a member of the bubble this round counts for (Go: IsAssociated)
                boolean durable = (s & BUBBLE_FLAG) != 0 && bubble != null && bubble == Bubble.current();
                sema.acquireWaitGroup(durable);
                if (state.get() != 0) {
                    throw new IllegalStateException("sync: WaitGroup is reused before previous Wait has returned");
                }
                return;
            }
        }
    }

    /**
     * Go 1.25's WaitGroup.Go: add(1), run f in a new goroutine, done() when f returns normally or
     * ends its goroutine by {@code Go.goexit()}. When f throws, the exception is re-raised,
     * uncaught, in f's goroutine, and whether the group is done first depends on what the runtime
     * does with it:
     * <ul>
     * <li>under the default {@code PanicPolicy.CRASH} it is not: the runtime stops, and {@code
     *     await()} must not return as if all went well while it does. Go's WaitGroup.Go recovers
     *     f's panic and re-panics without Done for the same reason (its Wait would race the fatal
     *     panic);
     * <li>where the runtime goes on ({@code PanicPolicy.LOG} or a handler given to {@code
     *     onUncaughtException}), it is, as by a {@code defer wg.Done()}: f's goroutine has ended,
     *     and a group that never reached zero would leave every {@code await()} asleep for ever.
     *     Go has no such runtime (a panic there always ends the program), so this case is ours.
     * </ul>
     * Called from a goroutine (it uses {@code Go.go}); from a platform thread use add/done
     * around {@code GoRuntime.go}.
     */
    public void go(Runnable f) {
        add(1);
        Go.go(() -> {
            try {
                f.run();
            } catch (Go.Goexit exit) {
                done(); // Goexit is not a panic: the goroutine ended, abruptly but normally
                throw exit;
            } catch (Throwable t) {
                if (Go.runtime().config().panicPolicy() != SchedulerConfig.PanicPolicy.CRASH) {
                    done(); // the runtime outlives f's failure: so must the count's promise
                }
                throw t;
            }
            done();
        });
    }

    /** The counter now; a snapshot. */
    int count() {
        return counter(state.get());
    }
}
