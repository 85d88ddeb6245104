package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Go channel: a typed conduit with an optional buffer, between goroutines and/or platform threads.
 *
 * <p>Semantics are Go's: a send blocks until a receiver takes the value (unbuffered) or there is room
 * in the buffer; a receive blocks until a value is available; {@link #close()} wakes every waiter
 * (receivers get {@code ok == false}, senders get {@link ChanClosedException}); values already
 * buffered stay receivable after close; a closed channel cannot be reopened. Null values are rejected
 * with {@link NullPointerException} (null is the "closed" result of {@link #recv()}).
 *
 * <p>Who blocks: inside a goroutine a blocking call parks only the goroutine; on a platform thread it
 * parks the thread (uninterruptibly, see {@link Sudog.ThreadParker}); {@link #sendAsync} and
 * {@link #recvAsync} park nobody. Dependent stages of those futures that are attached without an
 * executor run on the thread that completes the operation, which may be a goroutine's carrier: keep
 * them short or use the {@code *Async} variants.
 *
 * <p>Go: runtime/chan.go
 */
public final class Chan<T> implements Iterable<T> {
    /*
     * Implementation notes.
     *
     * Invariants (all guarded by lock):
     *  - At least one of sendq and recvq is empty, except for an unbuffered channel with a single
     *    goroutine blocked in a select that both sends and receives on it (the select's own cases can
     *    never pair: see Select).
     *  - Buffered: qcount > 0 implies recvq is empty; qcount < dataqsiz implies sendq is empty.
     *  - buf[recvx .. recvx+qcount) (mod dataqsiz) holds the values, every other slot is null.
     *  - closed goes 0 -> 1 once, never back.
     *
     * Memory order. qcount, closed and the queue heads are written only with lock held, with
     * release stores, and read without the lock (with acquire loads) only by the lock-free fast
     * paths of non-blocking operations; see the arguments at full()/empty() users. Under the lock
     * plain reads suffice.
     *
     * Readying rule: a waker never readies a goroutine, unparks a thread or completes a future while
     * holding lock; it dequeues the partner's sudog (which then belongs to it), transfers the value,
     * unlocks, and only then calls Sudog.ready().
     *
     * Early release (goroutines; a departure from Go). Go enqueues the sudog and parks with the lock
     * held, releasing it in chanparkcommit once the G is waiting. Here a plain send or receive
     * enqueues its sudog (marked parkAfterUnlock), releases the lock, and only then yields
     * (Scheduler.goparkUnlocked): freezing a continuation costs far more than Go's mcall, and on a
     * contended channel the other M would spin on the lock for all of it. A waker may therefore
     * dequeue the sudog and call goready before the G has yielded; goready then finds it RUNNING
     * and marks it READIED instead of queueing it, and parkM, seeing READIED, runs it again at
     * once. No wake-up is lost: the status word decides which side came first. A select still parks
     * the Go way (its commit unlocks every channel after the G is waiting), and so does Sema.
     * Platform threads enqueue, unlock and then park on their ThreadParker, whose
     * permit-plus-flag protocol tolerates the wake arriving first.
     *
     * Allocation: send/recv/trySend/tryRecv/close allocate nothing when they do not block (the
     * result markers are shared); a blocking send or receive allocates one sudog (see Sudog "Why
     * sudogs are not recycled"); recv2/tryRecv allocate the Received record they return (except
     * the shared closed result); sendAsync/recvAsync allocate their future and, when they must
     * wait, one sudog; select allocates two small int arrays per call and a sudog per case when
     * it blocks (see Select).
     */

    private static final VarHandle QCOUNT;
    private static final VarHandle CLOSED;
    private static final VarHandle LOCK_STATE;
    private static final VarHandle RECVQ_FIRST;
    private static final VarHandle SENDQ_FIRST;
    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            QCOUNT = l.findVarHandle(Chan.class, "qcount", int.class);
            CLOSED = l.findVarHandle(Chan.class, "closed", int.class);
            LOCK_STATE = l.findVarHandle(Chan.class, "lockState", int.class);
            RECVQ_FIRST = l.findVarHandle(Chan.class, "recvqFirst", Sudog.class);
            SENDQ_FIRST = l.findVarHandle(Chan.class, "sendqFirst", Sudog.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Result marker of {@link #chanrecv}: a non-blocking receive found nothing. */
    static final Object WOULD_BLOCK = new Object();
    /** Result marker of {@link #chanrecv}: the channel is closed and drained. */
    static final Object CLOSED_EMPTY = new Object();

    private static final AtomicLong IDS = new AtomicLong();

    /** Lock-order key for select (Go sorts by hchan address); unique, never reused. */
    final long id = IDS.incrementAndGet();

    /**
     * The channel's lock (Go: hchan.lock), a {@link RuntimeLock} word kept in the channel itself
     * rather than in an object of its own: one cache line fewer touched per operation on a cold
     * channel, and 16 bytes less per channel. 0 free, 1 held; same rules as RuntimeLock.
     */
    private volatile int lockState;
    /** Ring buffer of dataqsiz slots; unbuffered channels share {@link #NO_BUFFER}. */
    private final Object[] buf;
    /** The buffer of every unbuffered channel: never read or written, it saves 16 bytes a channel. */
    private static final Object[] NO_BUFFER = {};
    /** Capacity; immutable. */
    final int dataqsiz;
    /** Values in buf. Written under lock with release stores; read lock-free with acquire loads. */
    int qcount;
    /** 1 once closed. Written under lock with a release store; read lock-free with acquire loads. */
    int closed;
    /** Next slot to send into. Guarded by lock. */
    private int sendx;
    /** Next slot to receive from. Guarded by lock. */
    private int recvx;
    /**
     * The ends of the two wait queues (Go: hchan.recvq, hchan.sendq), kept in the channel itself
     * (see WaitQ). Guarded by lock; the heads are also read lock-free, by full() and empty().
     */
    private Sudog recvqFirst, recvqLast, sendqFirst, sendqLast;

    /** Blocked receivers: {@code RECVQ.enqueue(c, sg)} and so on. */
    static final WaitQ<Chan<?>> RECVQ = new WaitQ<>() {
        @Override
        Sudog first(Chan<?> c) {
            return c.recvqFirst;
        }

        @Override
        void setFirst(Chan<?> c, Sudog s) {
            RECVQ_FIRST.setRelease(c, s);
        }

        @Override
        Sudog last(Chan<?> c) {
            return c.recvqLast;
        }

        @Override
        void setLast(Chan<?> c, Sudog s) {
            c.recvqLast = s;
        }
    };

    /** Blocked senders. */
    static final WaitQ<Chan<?>> SENDQ = new WaitQ<>() {
        @Override
        Sudog first(Chan<?> c) {
            return c.sendqFirst;
        }

        @Override
        void setFirst(Chan<?> c, Sudog s) {
            SENDQ_FIRST.setRelease(c, s);
        }

        @Override
        Sudog last(Chan<?> c) {
            return c.sendqLast;
        }

        @Override
        void setLast(Chan<?> c, Sudog s) {
            c.sendqLast = s;
        }
    };
    /**
     * The channel timer that owns this channel (time.Timer, Ticker, Time.after), or null. Such a
     * channel is receive-only for everyone but its timer, and reports len and cap 0 (Go 1.23).
     * Go: hchan.timer
     */
    final RuntimeTimer timer;
    /**
     * The synctest bubble of the goroutine that made this channel (a timer channel: its timer's),
     * or null. Only that bubble's goroutines may use it, so a goroutine blocked on it is durably
     * blocked (see Bubble). Immutable. Go: hchan.bubble
     */
    final Bubble bubble;
    /**
     * {@link #never()}: stands in for Go's nil channel (Context.background's done channel), so a
     * wait on it is durable in a bubble as a nil-channel wait is. Immutable.
     */
    private final boolean nilLike;

    private Chan(int capacity) {
        this.dataqsiz = capacity;
        this.buf = capacity == 0 ? NO_BUFFER : new Object[capacity];
        this.timer = null;
        this.bubble = Bubble.ofCaller();
        this.nilLike = false;
    }

    private Chan(boolean nilLike) {
        this.dataqsiz = 0;
        this.buf = NO_BUFFER;
        this.timer = null;
        this.bubble = null;
        this.nilLike = nilLike;
    }

    private static final Chan<Object> NEVER = new Chan<>(true);

    /**
     * The process-wide channel that is never ready: nothing may send on it or close it, so a
     * receive blocks for ever, as on Go's nil channel. It belongs to no synctest bubble, whoever
     * touches it first, and waiting on it inside a bubble is durable (Go: receiving from a nil
     * channel). Context.background().done() is this channel.
     */
    @SuppressWarnings("unchecked")
    public static <T> Chan<T> never() {
        return (Chan<T>) NEVER;
    }

    /** Whether this is {@link #never()}. */
    boolean nilLike() {
        return nilLike;
    }

    private Chan(int capacity, RuntimeTimer timer) {
        this.dataqsiz = capacity;
        this.buf = capacity == 0 ? NO_BUFFER : new Object[capacity];
        this.timer = timer;
        this.bubble = timer.bubble;
        this.nilLike = false;
    }

    /**
     * Fails when gp (the caller's goroutine, or null) is not in this channel's bubble. Called only
     * for a bubble channel. Go: runtime/chan.go "send on synctest channel from outside bubble"
     */
    void checkBubble(G gp, String op) {
        if (gp == null || gp.bubble != bubble) {
            throw new IllegalStateException(op + " synctest channel from outside bubble");
        }
    }

    /**
     * The channel of channel timer t: one buffer slot for the timer's own non-blocking send,
     * which stop and reset drain. Go: time.NewTimer's make(chan Time, 1) plus newTimer's c.timer
     */
    static Chan<java.time.Instant> timerChan(RuntimeTimer t) {
        return new Chan<>(1, t);
    }

    /** An unbuffered channel. Go: runtime/chan.go makechan */
    public static <T> Chan<T> make() {
        return new Chan<>(0);
    }

    /**
     * A channel with a buffer of {@code capacity} values (0: unbuffered).
     *
     * @throws IllegalArgumentException when capacity is negative ("makechan: size out of range")
     *     Go: runtime/chan.go makechan
     */
    public static <T> Chan<T> make(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("makechan: size out of range: " + capacity);
        }
        return new Chan<>(capacity);
    }

    /** Takes the channel's lock. Can be called by any thread or goroutine not already holding it. */
    void lock() {
        if (!LOCK_STATE.compareAndSet(this, 0, 1)) {
            RuntimeLock.lockSlow(LOCK_STATE, this);
        }
    }

    /** The lock must be held; called by its holder, or by a select's park commit it was handed to. */
    void unlock() {
        assert lockState == 1 : "unlock of unlocked channel lock";
        LOCK_STATE.setRelease(this, 0); // store-release: publishes the critical section
    }

    /** For the assertions of "lock must be held". */
    boolean lockHeld() {
        return lockState == 1;
    }

    // ---- send ------------------------------------------------------------------------------------

    /**
     * Sends {@code value}, blocking until a receiver takes it or the buffer has room.
     *
     * @throws ChanClosedException when the channel is closed, before or while waiting
     * @throws NullPointerException when value is null
     */
    public void send(T value) {
        Objects.requireNonNull(value, "value");
        chansend(value, true);
    }

    /** Sends only if that can be done without blocking (Go's select with default). */
    public boolean trySend(T value) {
        Objects.requireNonNull(value, "value");
        return chansend(value, false);
    }

    /**
     * Go's chansend. Can be called by any goroutine or thread holding no runtime lock.
     * Go: runtime/chan.go chansend
     */
    private boolean chansend(Object ep, boolean block) {
        if (timer != null) {
            throw notForTimerChannels("send on");
        }
        if (nilLike) {
            throw new UnsupportedOperationException("send on Chan.never()");
        }
        G gp = Scheduler.getg();
        if (bubble != null) {
            checkBubble(gp, "send on");
        }
        if (gp != null) {
            if (gp.status() == G.SYSCALL) {
                return Scheduler.syscallCallback(gp, () -> chansend(ep, block));
            }
            Scheduler.checkpoint(gp); // a channel operation is a preemption safe point (Go: the function prologue)
        }
        // Fast path: fail a non-blocking send without taking the lock.
        //
        // After observing that the channel is not closed, we observe that it is not ready for
        // sending. Each observation is a single-word read (acquire, so the second cannot be
        // satisfied before the first). Because a closed channel cannot go from "ready for sending"
        // to "not ready for sending", even if the channel is closed between the two observations
        // they imply a moment between them when it was both not yet closed and not ready for
        // sending. We behave as if we observed the channel at that moment and report that the send
        // cannot proceed. (Same argument as Go's.)
        if (!block && (int) CLOSED.getAcquire(this) == 0 && full()) {
            return false;
        }

        lock();
        Object sent = offerLocked(ep);
        if (sent != null) {
            unlock();
            if (sent == SEND_CLOSED) {
                throw new ChanClosedException("send on closed channel");
            }
            if (sent != BUFFERED) {
                ((Sudog) sent).ready(Scheduler.mFor(gp));
            }
            return true;
        }
        if (!block) {
            unlock();
            return false;
        }

        // Block on sendq. The receiver copies the value out of mysg.elem.
        Sudog mysg = Sudog.acquireSudog();
        mysg.elem = ep;
        mysg.c = this;
        if (gp != null) {
            mysg.g = gp;
            mysg.parkAfterUnlock = true;
            SENDQ.enqueue(this, mysg);
            unlock(); // before the park: see "Early release" above
            WaitReason reason = bubble != null ? WaitReason.SYNCTEST_CHAN_SEND : WaitReason.CHAN_SEND;
            if (!Scheduler.goparkUnlocked(gp, reason)) {
                withdrawAfterFailedPark(SENDQ, mysg, gp, reason);
            }
        } else {
            Sudog.ThreadParker p = Sudog.currentParker();
            mysg.waiter = p;
            p.param = null;
            SENDQ.enqueue(this, mysg);
            unlock();
            Sudog fired = p.park(this);
            assert fired == mysg : "chansend: spurious wakeup";
        }
        boolean closedWhileWaiting = !mysg.success;
        Sudog.releaseSudog(mysg);
        if (closedWhileWaiting) {
            assert closed != 0 : "chansend: spurious wakeup";
            throw new ChanClosedException("send on closed channel");
        }
        return true;
    }

    /** Go's type system makes a timer's channel receive-only ({@code <-chan Time}); here it is checked. */
    static UnsupportedOperationException notForTimerChannels(String op) {
        return new UnsupportedOperationException(op + " a timer channel: it is receive-only (Go: <-chan time.Time)");
    }

    /**
     * The send of a channel timer's function: to a waiting receiver, else into the buffer, else
     * dropped (a ticker's slow receiver). Never blocks, is no preemption point, may run on a
     * scheduler thread. Go: time/sleep.go sendTime's select with default
     */
    void timerSend(Object ep) {
        lock();
        Object sent = offerLocked(ep); // never SEND_CLOSED: a timer channel cannot be closed
        unlock();
        if (sent instanceof Sudog sg) {
            sg.ready(Scheduler.mFor(Scheduler.getg()));
        }
    }

    /**
     * Discards a value the timer sent and nobody received; returns whether there was one. Must
     * not fire the timer (the caller may hold its sendLock). Go: runtime/chan.go timerchandrain
     */
    boolean timerDrain() {
        if ((int) QCOUNT.getAcquire(this) == 0) {
            return false;
        }
        lock();
        boolean any = false;
        while (qcount > 0) {
            bufferTake();
            any = true;
        }
        unlock();
        return any;
    }

    /** lock must be held; qcount < dataqsiz. */
    void bufferPut(Object ep) {
        assert lockHeld() && qcount < dataqsiz;
        buf[sendx] = ep;
        if (++sendx == dataqsiz) {
            sendx = 0;
        }
        QCOUNT.setRelease(this, qcount + 1);
    }

    /** lock must be held; qcount > 0. */
    Object bufferTake() {
        assert lockHeld() && qcount > 0;
        Object v = buf[recvx];
        buf[recvx] = null;
        if (++recvx == dataqsiz) {
            recvx = 0;
        }
        QCOUNT.setRelease(this, qcount - 1);
        return v;
    }

    /**
     * lock must be held; sg was dequeued from sendq. Takes the value a blocked sender offers: directly
     * from it when unbuffered; otherwise (the buffer is then full) the head of the buffer, and the
     * sender's value goes to the tail slot just freed, keeping FIFO order. Marks sg successful; the
     * caller unlocks and then readies sg.
     * Go: runtime/chan.go recv
     */
    Object recvFromSender(Sudog sg) {
        assert lockHeld();
        Object v;
        if (dataqsiz == 0) {
            v = sg.elem;
        } else {
            assert qcount == dataqsiz : "recv: waiting sender on a non-full buffer";
            v = buf[recvx];
            buf[recvx] = sg.elem;
            if (++recvx == dataqsiz) {
                recvx = 0;
            }
            sendx = recvx; // the buffer is still full: the next send slot is the next receive slot
        }
        sg.elem = null;
        sg.success = true;
        return v;
    }

    /*
     * The two halves every operation shares. Go's chansend, chanrecv and selectgo each hand a value
     * to a waiting peer through send() and recv(); here offerLocked and takeLocked are those
     * helpers widened to the whole of an operation that does not wait (closed, a waiting peer, the
     * buffer, in Go's order), so that the blocking operations, the async ones, select's first pass
     * and the timer's send cannot drift apart. They stop short of unlocking and readying: a select
     * unlocks all its channels, a platform thread readies without an M, so the caller does both.
     */

    /** {@link #offerLocked}: the value went into the buffer, nobody to ready. */
    static final Object BUFFERED = new Object();
    /** {@link #offerLocked}: the channel is closed; the caller unlocks, then fails the send. */
    static final Object SEND_CLOSED = new Object();

    /**
     * lock must be held. A send that does not wait: on a closed channel it fails; a waiting
     * receiver gets the value straight into its sudog, bypassing the buffer (which is empty, or the
     * receiver would not wait); else the buffer takes it if it has room. Returns the receiver's
     * sudog (the caller unlocks, then readies it), {@link #BUFFERED}, {@link #SEND_CLOSED}, or null
     * when the send would have to wait.
     * Go: runtime/chan.go chansend (its non-blocking part) and send
     */
    Object offerLocked(Object ep) {
        assert lockHeld();
        if (closed != 0) {
            return SEND_CLOSED;
        }
        Sudog sg = RECVQ.dequeue(this);
        if (sg != null) {
            sg.elem = ep;
            sg.success = true;
            return sg;
        }
        if (qcount < dataqsiz) {
            bufferPut(ep);
            return BUFFERED;
        }
        return null;
    }

    /**
     * lock must be held. A receive that does not wait: from a waiting sender (see
     * {@link #recvFromSender}), else from the buffer, else {@link #CLOSED_EMPTY} once the channel
     * is closed and drained. Returns the sender's sudog with the received value in its elem (the
     * caller takes the value out before it unlocks, then readies the sender), the value, {@link
     * #CLOSED_EMPTY}, or {@link #WOULD_BLOCK} when the receive would have to wait. A closed channel
     * has no waiting senders (close woke them all), so the sender comes first as in Go's selectgo.
     * A value is never mistaken for the sudog: channels carry user values, and Sudog is the
     * runtime's own package-private class.
     * Go: runtime/chan.go chanrecv (its non-blocking part) and recv
     */
    Object takeLocked() {
        assert lockHeld();
        Sudog sg = SENDQ.dequeue(this);
        if (sg != null) {
            sg.elem = recvFromSender(sg);
            return sg;
        }
        if (qcount > 0) {
            return bufferTake();
        }
        return closed != 0 ? CLOSED_EMPTY : WOULD_BLOCK;
    }

    /** The value of a {@link #takeLocked} that took from sender sg; lock must still be held. */
    static Object takenFrom(Sudog sg) {
        Object v = sg.elem;
        sg.elem = null;
        return v;
    }

    /**
     * Lock-free: would a send block? Unbuffered: no receiver waits; buffered: the buffer is full.
     * A stale (claimed but not yet removed) select sudog at the head makes this answer "not full";
     * the locked path then sorts it out.
     */
    private boolean full() {
        if (dataqsiz == 0) {
            return RECVQ_FIRST.getAcquire(this) == null;
        }
        return (int) QCOUNT.getAcquire(this) == dataqsiz;
    }

    /** Lock-free: would a receive block? Unbuffered: no sender waits; buffered: the buffer is empty. */
    private boolean empty() {
        if (dataqsiz == 0) {
            return SENDQ_FIRST.getAcquire(this) == null;
        }
        return (int) QCOUNT.getAcquire(this) == 0;
    }

    // ---- receive -------------------------------------------------------------------------------

    /** Receives a value, blocking until one is available; null once the channel is closed and drained. */
    @SuppressWarnings("unchecked")
    public T recv() {
        Object r = chanrecv(true);
        return r == CLOSED_EMPTY ? null : (T) r;
    }

    /** Receives like Go's {@code v, ok := <-ch}: ok is false once the channel is closed and drained. */
    @SuppressWarnings("unchecked")
    public Received<T> recv2() {
        Object r = chanrecv(true);
        return r == CLOSED_EMPTY ? Received.closed() : new Received<>((T) r, true);
    }

    /**
     * Receives only if that can be done without blocking (Go's select with default).
     *
     * @return null when a receive would block; otherwise the result, {@code ok == false} when the
     *     channel is closed and drained
     */
    @SuppressWarnings("unchecked")
    public Received<T> tryRecv() {
        Object r = chanrecv(false);
        if (r == WOULD_BLOCK) {
            return null;
        }
        return r == CLOSED_EMPTY ? Received.closed() : new Received<>((T) r, true);
    }

    /**
     * Go's chanrecv: returns the value, {@link #CLOSED_EMPTY}, or (non-blocking only)
     * {@link #WOULD_BLOCK}. Can be called by any goroutine or thread holding no runtime lock.
     * Go: runtime/chan.go chanrecv
     */
    private Object chanrecv(boolean block) {
        G gp = Scheduler.getg();
        if (bubble != null) {
            checkBubble(gp, "receive on");
        }
        if (gp != null) {
            if (gp.status() == G.SYSCALL) {
                return Scheduler.syscallCallback(gp, () -> chanrecv(block));
            }
            Scheduler.checkpoint(gp);
        }
        if (timer != null) {
            timer.maybeRunChan(); // a due timer nobody waited on fires now (Go 1.23: lazily)
        }
        // Fast path: check for failed non-blocking operation without acquiring the lock.
        if (!block && empty()) {
            // After observing that the channel is not ready for receiving, we observe whether it is
            // closed. Reordering these checks could give a wrong answer when racing with a close:
            // if the channel was open and not empty, was closed, and then drained, reordered reads
            // could see "empty" and "open" and wrongly report would-block. The acquire load in
            // empty() keeps the closed load after it. Because a channel cannot be reopened, seeing
            // it open now means it was open at the empty observation: report would-block as of then.
            if ((int) CLOSED.getAcquire(this) == 0) {
                return WOULD_BLOCK;
            }
            // The channel is irreversibly closed. Re-check emptiness (values may have arrived
            // between the first empty check and the closed check, they stay receivable); empty now
            // means closed and drained, since no send can follow the close.
            if (empty()) {
                return CLOSED_EMPTY;
            }
        }

        lock();
        Object got = takeLocked();
        if (got != WOULD_BLOCK) {
            if (got instanceof Sudog sg) {
                Object v = takenFrom(sg);
                unlock();
                sg.ready(Scheduler.mFor(gp));
                return v;
            }
            unlock();
            return got; // a buffered value, or CLOSED_EMPTY
        }
        if (!block) {
            unlock();
            return WOULD_BLOCK;
        }

        // Block on recvq. The sender fills mysg.elem.
        Sudog mysg = Sudog.acquireSudog();
        mysg.c = this;
        if (gp != null) {
            mysg.g = gp;
            mysg.parkAfterUnlock = true;
            RECVQ.enqueue(this, mysg);
            if (timer != null) {
                timer.blockChan();
            }
            unlock(); // before the park: see "Early release" above
            WaitReason reason = bubble != null ? WaitReason.SYNCTEST_CHAN_RECEIVE
                    : nilLike ? WaitReason.CHAN_RECEIVE_NIL_CHAN : WaitReason.CHAN_RECEIVE;
            if (!Scheduler.goparkUnlocked(gp, reason)) {
                try {
                    withdrawAfterFailedPark(RECVQ, mysg, gp, reason);
                } finally {
                    if (timer != null) {
                        timer.unblockChan();
                    }
                }
            } else if (timer != null) {
                timer.unblockChan();
            }
        } else {
            Sudog.ThreadParker p = Sudog.currentParker();
            mysg.waiter = p;
            p.param = null;
            RECVQ.enqueue(this, mysg);
            if (timer != null) {
                timer.blockChan();
            }
            unlock();
            Sudog fired = p.park(this);
            assert fired == mysg : "chanrecv: spurious wakeup";
            if (timer != null) {
                timer.unblockChan();
            }
        }
        Object v = mysg.success ? mysg.elem : CLOSED_EMPTY;
        Sudog.releaseSudog(mysg);
        return v;
    }

    /**
     * The caller queued mysg on q, released the lock, and could not park (a pinned goroutine:
     * inside {@code Go.procPin} or under a native frame). Takes mysg back off q and throws, as a
     * park that cannot happen does; unless a waker already took it, in which case the operation
     * has completed: wait for the waker's goready and return normally.
     */
    private void withdrawAfterFailedPark(WaitQ<Chan<?>> q, Sudog mysg, G gp, WaitReason reason) {
        lock();
        boolean stillQueued = q.dequeueSudoG(this, mysg);
        unlock();
        if (stillQueued) {
            Sudog.releaseSudog(mysg);
            throw Scheduler.cannotPark(gp, reason);
        }
        Scheduler.awaitReadied(gp);
    }

    // ---- close ---------------------------------------------------------------------------------

    /**
     * Closes the channel: every blocked receiver returns (null / {@code ok == false}), every blocked
     * sender throws {@link ChanClosedException}; buffered values stay receivable.
     *
     * @throws ChanClosedException when the channel is already closed ("close of closed channel")
     *     Go: runtime/chan.go closechan
     */
    public void close() {
        if (timer != null) {
            throw notForTimerChannels("close of");
        }
        if (bubble != null) {
            checkBubble(Scheduler.getg(), "close of");
        }
        if (nilLike) {
            throw new UnsupportedOperationException("close of Chan.never()");
        }
        lock();
        if (closed != 0) {
            unlock();
            throw new ChanClosedException("close of closed channel");
        }
        CLOSED.setRelease(this, 1);

        // Collect every waiter on a list of close's own, ready them after unlock. Not through the
        // sudogs' queue links: a dequeued sudog must look dequeued (next == prev == null) to
        // whoever still holds it, such as a pinned waiter withdrawing it (withdrawAfterFailedPark)
        // or a select's pass 3. Go links the Gs through schedlink (a gList) for the same reason.
        Sudog[] woken = null;
        int n = 0;
        for (WaitQ<Chan<?>> q = RECVQ; q != null; q = q == RECVQ ? SENDQ : null) { // readers, then writers (they will throw)
            Sudog sg;
            while ((sg = q.dequeue(this)) != null) {
                sg.elem = null;
                sg.success = false;
                if (woken == null) {
                    woken = new Sudog[4];
                } else if (n == woken.length) {
                    woken = java.util.Arrays.copyOf(woken, n * 2);
                }
                woken[n++] = sg;
            }
        }
        unlock();

        if (n > 0) {
            G gp = Scheduler.getg();
            M mp = Scheduler.mFor(gp);
            for (int i = n - 1; i >= 0; i--) { // Go pops its gList: last dequeued, first readied
                woken[i].ready(mp); // the woken side recycles its sudog: touch it no more
            }
        }
    }

    /** Whether the channel has been closed (it may still hold buffered values). */
    public boolean isClosed() {
        return (int) CLOSED.getAcquire(this) != 0;
    }

    /** Values in the buffer now (Go's len(ch)); a snapshot. 0 for a timer's channel (Go 1.23). */
    public int len() {
        return timer != null ? 0 : (int) QCOUNT.getAcquire(this);
    }

    /** Buffer capacity (Go's cap(ch)). 0 for a timer's channel: it behaves as unbuffered (Go 1.23). */
    public int cap() {
        return timer != null ? 0 : dataqsiz;
    }

    /** Senders blocked on this channel now (including pending {@link #sendAsync} and select cases); a snapshot. */
    public int waitingSenders() {
        lock();
        try {
            return SENDQ.size(this);
        } finally {
            unlock();
        }
    }

    /** Receivers blocked on this channel now (including pending {@link #recvAsync} and select cases); a snapshot. */
    public int waitingReceivers() {
        lock();
        try {
            return RECVQ.size(this);
        } finally {
            unlock();
        }
    }

    // ---- async -------------------------------------------------------------------------------

    /**
     * Sends without blocking anyone: the future completes when the value has been delivered (to a
     * receiver or into the buffer), or exceptionally with {@link ChanClosedException}.
     *
     * <p>Withdrawal: {@code cancel(..)}, or any completion from outside (for example
     * {@code orTimeout}), removes the pending send atomically with respect to receivers and close: if
     * it succeeds the value was not delivered and never will be; if the send already happened it
     * returns false and the result stands.
     */
    public CompletableFuture<Void> sendAsync(T value) {
        Objects.requireNonNull(value, "value");
        if (timer != null) {
            throw notForTimerChannels("send on");
        }
        if (bubble != null) {
            checkBubble(Scheduler.getg(), "send on");
        }
        lock();
        Object sent = offerLocked(value);
        if (sent != null) {
            unlock();
            if (sent == SEND_CLOSED) {
                return CompletableFuture.failedFuture(new ChanClosedException("send on closed channel"));
            }
            if (sent != BUFFERED) {
                ((Sudog) sent).ready();
            }
            return CompletableFuture.completedFuture(null);
        }
        AsyncOp<Void> f = new AsyncOp<>(this, true);
        f.sg.elem = value;
        SENDQ.enqueue(this, f.sg);
        unlock();
        return f;
    }

    /**
     * Receives without blocking anyone: the future completes with the value, or with
     * {@code ok == false} once the channel is closed and drained. Withdrawal as for
     * {@link #sendAsync}: a successful cancel means no value was taken.
     */
    @SuppressWarnings("unchecked")
    public CompletableFuture<Received<T>> recvAsync() {
        if (bubble != null) {
            checkBubble(Scheduler.getg(), "receive on");
        }
        if (timer != null) {
            timer.maybeRunChan();
        }
        lock();
        Object got = takeLocked();
        if (got != WOULD_BLOCK) {
            if (got instanceof Sudog sg) {
                Object v = takenFrom(sg);
                unlock();
                sg.ready();
                return CompletableFuture.completedFuture(new Received<>((T) v, true));
            }
            unlock();
            return CompletableFuture.completedFuture(got == CLOSED_EMPTY ? Received.closed() : new Received<>((T) got, true));
        }
        AsyncOp<Received<T>> f = new AsyncOp<>(this, false);
        RECVQ.enqueue(this, f.sg);
        if (timer != null) {
            timer.blockChan(); // unblocked when the op is woken or withdrawn
        }
        unlock();
        return f;
    }

    /**
     * A pending async send or receive: the future is its own waiter. Its state decides, once, who
     * ends the operation: a waker (state PENDING -> CLAIMED under the channel lock, then completes
     * the future after unlocking) or a withdrawal (PENDING -> WITHDRAWN, then removes the sudog under
     * the lock). Exactly one wins, so a value is never both delivered and withdrawn.
     */
    private static final class AsyncOp<R> extends CompletableFuture<R> implements Sudog.Waiter {
        private static final VarHandle STATE;
        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(AsyncOp.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
        private static final int PENDING = 0;
        private static final int CLAIMED = 1;
        private static final int WITHDRAWN = 2;

        private final Chan<?> chan;
        private final boolean isSend;
        final Sudog sg = new Sudog();
        private volatile int state;

        AsyncOp(Chan<?> chan, boolean isSend) {
            this.chan = chan;
            this.isSend = isSend;
            sg.c = chan;
            sg.isSelect = true; // wakers must claim it
            sg.waiter = this;
        }

        /** Called by a waker holding the channel lock. */
        @Override
        public boolean claim() {
            return STATE.compareAndSet(this, PENDING, CLAIMED);
        }

        /** Called by the waker, no lock held, after it claimed the op and set success/elem. */
        @Override
        @SuppressWarnings("unchecked")
        public void wake(Sudog s) {
            if (!isSend && chan.timer != null) {
                chan.timer.unblockChan();
            }
            if (isSend) {
                if (s.success) {
                    super.complete(null);
                } else {
                    super.completeExceptionally(new ChanClosedException("send on closed channel"));
                }
            } else {
                super.complete((R) (s.success ? new Received<>(s.elem, true) : Received.closed()));
            }
        }

        /** Wins the op for its withdrawal and takes the sudog off its queue; false when a waker won. */
        private boolean withdraw() {
            if (!STATE.compareAndSet(this, PENDING, WITHDRAWN)) {
                return false;
            }
            chan.lock();
            (isSend ? SENDQ : RECVQ).dequeueSudoG(chan, sg);
            if (!isSend && chan.timer != null) {
                chan.timer.unblockChan();
            }
            chan.unlock();
            return true;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return withdraw() && super.cancel(mayInterruptIfRunning);
        }

        @Override
        public boolean complete(R value) {
            return withdraw() && super.complete(value);
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            return withdraw() && super.completeExceptionally(ex);
        }
    }

    // ---- range -------------------------------------------------------------------------------

    /**
     * Go's {@code for v := range ch}: each {@code hasNext()} blocks for the next value; iteration ends
     * when the channel is closed and drained. Single use, not thread-safe.
     */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private Object next;
            private boolean done;

            @Override
            public boolean hasNext() {
                if (next != null) {
                    return true;
                }
                if (done) {
                    return false;
                }
                Object r = chanrecv(true);
                if (r == CLOSED_EMPTY) {
                    done = true;
                    return false;
                }
                next = r;
                return true;
            }

            @Override
            @SuppressWarnings("unchecked")
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("channel closed");
                }
                Object v = next;
                next = null;
                return (T) v;
            }
        };
    }

    @Override
    public String toString() {
        return "Chan#" + id + (timer != null ? "[timer" : "[len=" + len() + ", cap=" + dataqsiz) + (isClosed() ? ", closed]" : "]");
    }
}
