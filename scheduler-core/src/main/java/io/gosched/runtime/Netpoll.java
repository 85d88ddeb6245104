package io.gosched.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The network poller of one runtime: a {@link Selector} over every {@link PollDesc}'s channel.
 *
 * <p>Who polls. Exactly one thread at a time, the holder of {@link #polling}: an M in
 * findRunnable without blocking (step 8), sysmon when nobody polled for 10 ms, or the one M
 * that blocks in it because it has nothing to do (step 14). The blocking poller also publishes
 * {@code sched.lastpoll = 0} and its deadline in {@code sched.pollUntil}, so that whoever adds
 * an earlier timer or new work knows to break it out ({@link #netpollBreak}). Go lets several
 * threads call epoll_wait; a Java Selector serializes select() calls on its own lock, so a
 * non-blocking poll next to a blocking one would wait for it: one flag keeps them apart.
 *
 * <p>Level-triggered readiness. Go registers each fd once, edge-triggered. A Selector is
 * level-triggered: a readable socket nobody reads would wake every select. So interest is set
 * only while a goroutine waits ({@link PollDesc#waitRead}) and cleared when the readiness is
 * reported; a waiter that arms interest while a poller is blocked breaks it out so the new
 * interest takes effect.
 *
 * <p>Timed parks. While no descriptor has a waiter, the blocking poller parks its thread with
 * {@link LockSupport#parkNanos} instead of selecting: timers then wake it with microsecond
 * rather than millisecond precision. {@link #netpollBreak} both wakes the selector and
 * unparks the poller thread, so either way of sleeping is broken out.
 *
 * Go: runtime/netpoll.go, runtime/netpoll_epoll.go
 */
final class Netpoll {

    final Sched sched;
    final Selector selector;
    /** Goroutines and threads between arming interest and being woken. Go: netpollWaiters */
    final AtomicInteger waiters = new AtomicInteger();
    /** One poller at a time (Go: pollingNet, plus the lastpoll owner). */
    final AtomicBoolean polling = new AtomicBoolean();
    /** Coalesces netpollBreak calls until the poller consumes them. Go: netpollWakeSig */
    private final AtomicInteger wakeSig = new AtomicInteger();
    /** The thread blocked in {@link #netpoll} with a delay, or null. */
    private volatile Thread blockedPoller;
    /** Count of netpollBreak calls that woke something; for tests. */
    final AtomicInteger breaks = new AtomicInteger();

    Netpoll(Sched sched) {
        this.sched = sched;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the netpoll selector", e);
        }
    }

    boolean anyWaiters() {
        return waiters.get() > 0;
    }

    /**
     * Polls for ready descriptors: delay &lt; 0 blocks until something is ready or a break,
     * 0 does not block, &gt; 0 waits up to delay nanoseconds. Returns the Gs made ready, linked
     * through schedlink and still WAITING (the caller makes them runnable); threads waiting on
     * a descriptor are unparked directly. A break returns an empty list.
     * Executed only by the holder of {@link #polling}.
     * Go: runtime/netpoll_epoll.go netpoll
     */
    G netpoll(long delay) {
        assert polling.get();
        try {
            if (delay != 0) {
                Thread self = Thread.currentThread(); // an M without a goroutine, or sysmon: see M.current()
                if (self.isInterrupted()) {
                    Thread.interrupted(); // else park and select return at once (see "Interrupts" in M)
                }
                blockedPoller = self;
                try {
                    if (wakeSig.get() == 0) {
                        if (waiters.get() == 0) {
                            if (delay < 0) {
                                LockSupport.park(this);
                            } else {
                                LockSupport.parkNanos(this, delay);
                            }
                        } else if (delay < 0) {
                            selector.select();
                        } else {
                            // Millisecond resolution: round down (at least 1 ms). A poll that
                            // returns early only sends the M round findRunnable again.
                            selector.select(Math.max(1, delay / 1_000_000));
                        }
                    }
                } finally {
                    blockedPoller = null;
                }
                wakeSig.set(0);
            }
            // Also after a blocking select: selectNow picks up readiness that came since. Its
            // count only covers keys newly selected, so look at the selected set itself.
            selector.selectNow();
            if (selector.selectedKeys().isEmpty()) {
                return null;
            }
            G list = null;
            Iterator<SelectionKey> it = selector.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey key = it.next();
                it.remove();
                PollDesc pd = (PollDesc) key.attachment();
                int ready;
                try {
                    ready = key.readyOps();
                    // Level-triggered: stop watching what fired until a waiter re-arms it.
                    key.interestOpsAnd(~ready);
                } catch (CancelledKeyException e) {
                    ready = SelectionKey.OP_READ | SelectionKey.OP_WRITE;
                }
                if ((ready & (SelectionKey.OP_READ | SelectionKey.OP_ACCEPT)) != 0) {
                    list = pd.netpollready(list, PollDesc.MODE_READ);
                }
                if ((ready & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT)) != 0) {
                    list = pd.netpollready(list, PollDesc.MODE_WRITE);
                }
            }
            return list;
        } catch (IOException e) {
            return null;
        } catch (java.nio.channels.ClosedSelectorException e) {
            return null;
        }
    }

    /**
     * Wakes the blocked poller, if any, so that it re-evaluates (an earlier timer, new work, a
     * new interest). Coalesced: one wake-up until the poller consumes it.
     * Can be executed by any thread.
     * Go: runtime/netpoll_epoll.go netpollBreak
     */
    void netpollBreak() {
        if (!wakeSig.compareAndSet(0, 1)) {
            return;
        }
        breaks.incrementAndGet();
        selector.wakeup();
        Thread t = blockedPoller;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    void close() {
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing useful to do: the runtime is going away
        }
    }
}
