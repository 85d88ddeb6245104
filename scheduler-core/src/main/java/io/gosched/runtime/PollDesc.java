package io.gosched.runtime;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.util.concurrent.locks.LockSupport;

/**
 * A non-blocking channel registered with a runtime's netpoller, and the goroutines waiting for
 * it to become readable or writable. The low-level face of the netpoller that {@code
 * io.gosched.net} is built on, as Go's {@code internal/poll} is built on {@code pollDesc}.
 *
 * <p>Use: try the non-blocking operation; when it would block, call {@link #waitRead()} (or
 * {@link #waitWrite()}, {@link #waitConnect()}) and try again. A goroutine parks (its M runs
 * others), a platform thread parks itself. A wait ends when the channel is ready, its deadline
 * passes ({@link SocketTimeoutException}) or the descriptor is closed ({@link
 * AsynchronousCloseException}). One reader and one writer may wait at a time.
 *
 * <p>The wait slots {@code rg}/{@code wg} hold, as in Go, one of: null (nothing), {@code READY}
 * (readiness reported with no waiter: the next wait consumes it without parking), {@code WAIT}
 * (a waiter is about to park), or the waiting G or Thread. The waiter publishes itself in its
 * park commit (WAIT to G by CAS), so readiness, a deadline or close that arrives in between
 * turns WAIT into READY or null and the park is cancelled: no wake-up is ever lost.
 *
 * Go: runtime/netpoll.go pollDesc, poll_runtime_pollWait, netpollblock, netpollunblock
 */
public final class PollDesc implements AutoCloseable {

    static final int MODE_READ = 'r';
    static final int MODE_WRITE = 'w';

    private static final Object READY = new Object() {
        @Override
        public String toString() {
            return "pdReady";
        }
    };
    private static final Object WAIT = new Object() {
        @Override
        public String toString() {
            return "pdWait";
        }
    };

    private static final VarHandle RG;
    private static final VarHandle WG;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RG = l.findVarHandle(PollDesc.class, "rg", Object.class);
            WG = l.findVarHandle(PollDesc.class, "wg", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Netpoll netpoll;
    private final Sched sched;
    private final SelectableChannel channel;
    private final SelectionKey key;
    private final int readOp;

    @SuppressWarnings("unused") // through RG
    private volatile Object rg;
    @SuppressWarnings("unused") // through WG
    private volatile Object wg;

    /** Read/write deadlines in nanotime: 0 none, -1 passed; guarded by this. */
    private long rd;
    private long wd;
    private volatile boolean rdExpired;
    private volatile boolean wdExpired;
    private volatile boolean closing;
    private final RuntimeTimer rt;
    private final RuntimeTimer wt;

    private PollDesc(Sched sched, SelectableChannel channel) throws IOException {
        this.sched = sched;
        this.netpoll = sched.netpoll;
        this.channel = channel;
        if (channel.isBlocking()) {
            // The caller configures it: a JDK channel's blocking-mode switch takes ReentrantLocks,
            // which must not be called from a goroutine frame that may migrate (see io.gosched.net).
            throw new java.nio.channels.IllegalBlockingModeException();
        }
        this.readOp = (channel.validOps() & SelectionKey.OP_ACCEPT) != 0 ? SelectionKey.OP_ACCEPT : SelectionKey.OP_READ;
        this.key = channel.register(netpoll.selector, 0, this);
        this.rt = new RuntimeTimer((arg, when, delay) -> ((PollDesc) arg).deadlineFired(MODE_READ, when), this, true);
        this.wt = new RuntimeTimer((arg, when, delay) -> ((PollDesc) arg).deadlineFired(MODE_WRITE, when), this, true);
    }

    /**
     * Registers channel (already non-blocking) with the netpoller of the current goroutine's runtime.
     * Go: runtime/netpoll.go poll_runtime_pollOpen
     *
     * @throws IllegalStateException outside a goroutine: use {@link #open(GoRuntime, SelectableChannel)}
     */
    public static PollDesc open(SelectableChannel channel) throws IOException {
        return open(Go.runtime(), channel);
    }

    /** Registers channel (already non-blocking) with rt's netpoller. */
    public static PollDesc open(GoRuntime rt, SelectableChannel channel) throws IOException {
        return new PollDesc(rt.sched(), channel);
    }

    /** The channel this descriptor polls. */
    public SelectableChannel channel() {
        return channel;
    }

    /** Waits until the channel is readable (or acceptable). */
    public void waitRead() throws IOException {
        waitFor(MODE_READ, readOp);
    }

    /** Waits until the channel is writable. */
    public void waitWrite() throws IOException {
        waitFor(MODE_WRITE, SelectionKey.OP_WRITE);
    }

    /** Waits until a pending connect can be finished. */
    public void waitConnect() throws IOException {
        waitFor(MODE_WRITE, SelectionKey.OP_CONNECT);
    }

    /**
     * Sets the read deadline as a {@link RuntimeTimer#nanotime()} value; 0 clears it. A wait in
     * progress or started after the deadline fails with {@link SocketTimeoutException}.
     * Go: runtime/netpoll.go poll_runtime_pollSetDeadline
     */
    public void setReadDeadline(long nanotime) {
        setDeadline(MODE_READ, nanotime);
    }

    /** As {@link #setReadDeadline} for writes. */
    public void setWriteDeadline(long nanotime) {
        setDeadline(MODE_WRITE, nanotime);
    }

    /**
     * Before a read is tried: fails if the read deadline has passed or the descriptor is closed,
     * whether or not the read would block, as Go's FD.Read checks before its first attempt.
     *
     * @throws SocketTimeoutException when the read deadline has passed
     * @throws AsynchronousCloseException when the descriptor was closed
     *     Go: internal/poll pollDesc.prepareRead, runtime/netpoll.go poll_runtime_pollReset
     */
    public void prepareRead() throws IOException {
        checkErr(MODE_READ);
    }

    /** As {@link #prepareRead()} before a write. Go: internal/poll pollDesc.prepareWrite */
    public void prepareWrite() throws IOException {
        checkErr(MODE_WRITE);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosing() {
        return closing;
    }

    /**
     * Wakes every waiter with {@link AsynchronousCloseException}, stops the deadline timers and
     * deregisters the channel (the caller closes the channel itself).
     * Go: runtime/netpoll.go poll_runtime_pollUnblock, poll_runtime_pollClose
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
            rt.stop();
            wt.stop();
        }
        wake(netpollunblock(MODE_READ, false));
        wake(netpollunblock(MODE_WRITE, false));
        key.cancel();
    }

    // =============================================================================================

    private void waitFor(int mode, int op) throws IOException {
        for (;;) {
            checkErr(mode);
            netpoll.waiters.incrementAndGet();
            try {
                try {
                    key.interestOpsOr(op);
                } catch (java.nio.channels.CancelledKeyException e) {
                    checkErr(mode);
                    throw new ClosedChannelException();
                }
                // A poller blocked in select() sees new interest only at its next select.
                if (sched.lastpoll.get() == 0) {
                    netpoll.netpollBreak();
                }
                if (netpollblock(mode)) {
                    return;
                }
            } finally {
                netpoll.waiters.decrementAndGet();
            }
        }
    }

    private void checkErr(int mode) throws IOException {
        if (closing) {
            throw new AsynchronousCloseException();
        }
        if (mode == MODE_READ ? rdExpired : wdExpired) {
            throw new SocketTimeoutException("i/o timeout");
        }
    }

    private boolean errPending(int mode) {
        return closing || (mode == MODE_READ ? rdExpired : wdExpired);
    }

    private VarHandle slot(int mode) {
        return mode == MODE_READ ? RG : WG;
    }

    /**
     * Returns true if IO is ready, false if woken for another reason (deadline, close).
     * Go: runtime/netpoll.go netpollblock
     */
    private boolean netpollblock(int mode) {
        G gp = Scheduler.getg();
        if (gp != null && gp.status() == G.SYSCALL) {
            return Scheduler.syscallCallback(gp, () -> netpollblock(mode));
        }
        VarHandle s = slot(mode);
        for (;;) {
            Object old = s.getVolatile(this);
            if (old == READY) {
                if (s.compareAndSet(this, READY, null)) {
                    return true;
                }
                continue;
            }
            if (old != null) {
                throw new IllegalStateException("concurrent " + (mode == MODE_READ ? "read" : "write")
                        + " waits on one descriptor (one reader and one writer at a time)");
            }
            if (s.compareAndSet(this, null, WAIT)) {
                break;
            }
        }
        // Re-check errors after publishing WAIT: a deadline or close that came first would
        // otherwise find nobody to wake.
        if (!errPending(mode)) {
            if (gp != null) {
                if (gp.sched != sched) {
                    s.compareAndSet(this, WAIT, null);
                    throw new IllegalStateException("a goroutine of another runtime waits on this descriptor");
                }
                try {
                    Scheduler.gopark(mode == MODE_READ ? READ_COMMIT : WRITE_COMMIT, this, WaitReason.IO_WAIT);
                } catch (IllegalStateException cannotPark) {
                    // Pinned: no commit ran, so nobody but us saw WAIT as ours to wait on. Give the
                    // slot back (readiness that arrived meanwhile stays READY for the next wait).
                    s.compareAndSet(this, WAIT, null);
                    throw cannotPark;
                }
            } else {
                Thread me = Thread.currentThread();
                if (s.compareAndSet(this, WAIT, me)) {
                    while (s.getVolatile(this) == me) {
                        LockSupport.park(this);
                    }
                }
            }
        }
        Object old = s.getAndSet(this, null);
        return old == READY;
    }

    /**
     * The park commits: publish the parked G in its slot, or cancel the park (return false) if
     * readiness, a deadline or close consumed WAIT meanwhile. Go: netpollblockcommit
     */
    private static final ParkCommit READ_COMMIT = (gp, arg) -> RG.compareAndSet(arg, WAIT, gp);
    private static final ParkCommit WRITE_COMMIT = (gp, arg) -> WG.compareAndSet(arg, WAIT, gp);

    /**
     * Reports readiness (ioready) or an error to mode's waiter. Returns the waiter to wake (a G
     * still WAITING or a Thread) or null.
     * Can be executed by any thread.
     * Go: runtime/netpoll.go netpollunblock
     */
    private Object netpollunblock(int mode, boolean ioready) {
        VarHandle s = slot(mode);
        for (;;) {
            Object old = s.getVolatile(this);
            if (old == READY) {
                return null;
            }
            if (old == null && !ioready) {
                // Only ioready sets READY: a deadline or close is seen by the waiter itself.
                return null;
            }
            Object nw = ioready ? READY : null;
            if (s.compareAndSet(this, old, nw)) {
                return old == WAIT ? null : old;
            }
        }
    }

    /** Executed only by the poll owner. Go: netpollready */
    G netpollready(G list, int mode) {
        Object o = netpollunblock(mode, true);
        if (o instanceof G gp) {
            gp.schedlink = list;
            return gp;
        }
        if (o instanceof Thread t) {
            LockSupport.unpark(t);
        }
        return list;
    }

    private static void wake(Object o) {
        if (o instanceof G gp) {
            Scheduler.goready(gp);
        } else if (o instanceof Thread t) {
            LockSupport.unpark(t);
        }
    }

    /**
     * The deadline and its timer change together under this descriptor's monitor, as Go changes
     * them under pd.lock: otherwise two racing calls could leave the timer armed for the first
     * deadline and rd holding the second, and deadlineFired, seeing them differ, would drop the
     * only timer left (a read that never times out). Lock order: this, then the timer heap's and
     * the timer's monitors; timer functions run with no heap lock held, so deadlineFired may
     * take this monitor.
     * Go: runtime/netpoll.go poll_runtime_pollSetDeadline
     */
    private void setDeadline(int mode, long d) {
        boolean expired;
        synchronized (this) {
            if (closing) {
                return;
            }
            long now = RuntimeTimer.nanotime();
            expired = d != 0 && d <= now;
            if (mode == MODE_READ) {
                rd = expired ? -1 : d;
                rdExpired = expired;
            } else {
                wd = expired ? -1 : d;
                wdExpired = expired;
            }
            RuntimeTimer t = mode == MODE_READ ? rt : wt;
            if (d != 0 && !expired) {
                t.reset(d, 0);
            } else {
                t.stop();
            }
        }
        if (expired) {
            wake(netpollunblock(mode, false));
        }
    }

    /** The deadline timer fired. Go: runtime/netpoll.go netpolldeadlineimpl */
    private void deadlineFired(int mode, long when) {
        synchronized (this) {
            // A deadline moved after this timer was taken off the heap: stale, ignore it.
            if (closing || (mode == MODE_READ ? rd : wd) != when) {
                return;
            }
            if (mode == MODE_READ) {
                rd = -1;
                rdExpired = true;
            } else {
                wd = -1;
                wdExpired = true;
            }
        }
        wake(netpollunblock(mode, false));
    }
}
