package io.gosched.runtime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Instant;
import java.util.Objects;

/**
 * A runtime timer: a function the scheduler calls once {@link #nanotime()} reaches {@code when}
 * (and again every {@code period} for a periodic timer). This is the low-level timer that
 * {@code Go.sleep}, {@code io.gosched.time} and the network deadlines are built on, as Go's
 * {@code time} package is built on {@code runtime.timer}.
 *
 * <p>Where it lives. {@link #reset} puts the timer into the 4-ary heap of the caller's P when
 * called from a goroutine, so it is run by the M that holds that P (in {@code findRunnable}), by
 * a thief on its last stealing pass when that P is busy, and an M with nothing to do sleeps
 * exactly until it is due. Called from any other thread, the timer goes to one JVM-wide heap
 * served by a daemon thread ({@code gosched-timers}).
 *
 * <p>The function runs on a scheduler thread, outside every lock: it must be short and must not
 * block (Go's rule for timer functions). It may ready goroutines, send on a buffered channel
 * without blocking, or start a goroutine.
 *
 * <p>Channel timers ({@link #newChanTimer}, Go 1.23's timer channels with
 * {@code asynctimerchan=0}). The timer of a {@code time.Timer} or {@code Ticker} owns its channel
 * ({@link #c()}), and is in a heap only while some goroutine or thread is blocked receiving on
 * that channel ({@code blocked > 0}): a channel operation that is about to block adds it
 * ({@link #blockChan}), the last one to stop waiting takes it out again ({@link #unblockChan}),
 * and a receive that does not block fires it on the spot if it is due ({@link #maybeRunChan}).
 * So nothing but the user's own references keeps a channel timer alive: an abandoned
 * {@code Time.after(1h)} is garbage as soon as nobody waits on it, instead of sitting in a heap
 * for an hour. The channel has a buffer of one for the timer's own non-blocking send, and
 * reports len and cap 0. Stop and reset bump {@code seq} under {@code sendLock} and drain the
 * buffer, so no value from before them can be received after they return; a firing that took
 * its {@code seq} before the bump sends nothing.
 *
 * <p>Active versus heaped. {@code when > 0} means the timer is active (pending); {@code ts != null}
 * means it is in a heap. A plain timer is heaped exactly while it is active (reset adds it, stop
 * and the last firing take it out); a channel timer may be active and not heaped.
 *
 * <p>Locking. A heaped timer's {@code when}, {@code ts} and {@code idx} change only under both
 * the monitor of the heap holding it and the timer's monitor (in that order, Go's {@code ts.mu}
 * then {@code t.mu}); an unheaped timer's fields change under its monitor alone. A channel
 * timer's {@code sendLock} comes before both, and a channel's lock before the heap's
 * ({@link #blockChan} runs under it); the timer function runs with no heap or timer monitor held,
 * under {@code sendLock} for a channel timer, and takes the channel's lock inside. Unlike Go
 * 1.23, a stopped or unblocked timer is removed from its heap at once (no zombies): the heap
 * tracks each timer's index, so deletion is O(log n) and a heap never holds dead entries.
 *
 * Go: runtime/time.go timer
 */
public sealed class RuntimeTimer permits Timers.SleepTimer {

    /** What a timer does when it fires. */
    @FunctionalInterface
    public interface Func {
        /**
         * Called when the timer fires.
         *
         * @param arg   the argument given to the constructor
         * @param when  the {@link RuntimeTimer#nanotime()} at which the timer was due
         * @param delay how late the call is, in nanoseconds (now - when), never negative
         */
        void fire(Object arg, long when, long delay);
    }

    private static final VarHandle IS_SENDING;
    static {
        try {
            IS_SENDING = MethodHandles.lookup().findVarHandle(RuntimeTimer.class, "isSending", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The function of a channel timer: send the time it was due on its channel, without blocking
     * (a full buffer means a ticker's receiver is slow: the tick is dropped).
     * Go: time/sleep.go sendTime
     */
    private static final Func SEND_TIME = (arg, when, delay) -> {
        RuntimeTimer t = (RuntimeTimer) arg;
        t.chan.timerSend(t.bubble != null ? t.bubble.instantAt(when) : Instant.now().minusNanos(delay));
    };

    final Func f;
    final Object arg;
    /** The channel of a channel timer, null for a plain one (Go: isChan, t.arg). Immutable. */
    final Chan<Instant> chan;
    /**
     * Channel timers: held across the check of seq and the send, and by stop/modify while they
     * bump seq (Go: sendLock). Null for a plain timer.
     */
    private final Object sendLock;
    /**
     * The synctest bubble of the goroutine that created this timer, or null. A bubble timer uses
     * the bubble's clock, lives only in the bubble's heap, and may be armed only by the bubble's
     * goroutines. Immutable.
     */
    final Bubble bubble;
    /**
     * A timer on the real clock whoever arms it (network deadlines: I/O is never durable in a
     * bubble, so its deadlines stay real, as in Go). Immutable.
     */
    private final boolean realClock;

    // ---- guarded as described in the class comment --------------------------------------------
    /** When the timer fires next, in nanotime; 0 when it is not pending. */
    long when;
    /** The period of a periodic timer, 0 for a one-shot. */
    long period;
    /** The heap holding this timer, or null. Volatile so that stop/reset can find it before locking. */
    volatile TimerHeap ts;
    /** The timer's index in ts's array; heap lock held. */
    int idx;
    /** Channel timers: receivers blocked on chan (Go: blocked). This monitor held. */
    int blocked;
    /** Channel timers: configuration number; written under sendLock and this monitor (Go: seq). */
    long seq;
    /**
     * Channel one-shot timers: firings between taking the timer off its heap and checking seq
     * under sendLock; incremented under this monitor, decremented under sendLock (Go: isSending).
     */
    private volatile int isSending;

    /** Creates a stopped timer that calls {@code f.fire(arg, ...)} when it fires. */
    public RuntimeTimer(Func f, Object arg) {
        this.f = Objects.requireNonNull(f, "f");
        this.arg = arg;
        this.chan = null;
        this.sendLock = null;
        this.bubble = Bubble.ofCaller();
        this.realClock = false;
    }

    /** A plain timer on the real clock, in no bubble, that any goroutine may arm (PollDesc). */
    RuntimeTimer(Func f, Object arg, boolean realClock) {
        this.f = Objects.requireNonNull(f, "f");
        this.arg = arg;
        this.chan = null;
        this.sendLock = null;
        this.bubble = null;
        this.realClock = realClock;
    }

    private RuntimeTimer() {
        this.f = SEND_TIME;
        this.arg = this;
        this.bubble = Bubble.ofCaller();
        this.realClock = false;
        this.chan = Chan.timerChan(this);
        this.sendLock = new Object();
    }

    /**
     * A stopped channel timer: when it fires it sends the {@link Instant} it was due on {@link #c()}
     * without blocking. See the class comment for how it differs from a plain timer.
     * Go: runtime/time.go newTimer with a channel
     */
    public static RuntimeTimer newChanTimer() {
        return new RuntimeTimer();
    }

    /** The channel of a channel timer; null for a plain timer. */
    public Chan<Instant> c() {
        return chan;
    }

    /**
     * The clock of the scheduler's runtime timers, in nanoseconds: the caller's runtime's
     * ({@link SchedulerConfig#nanoClock()}, System.nanoTime by default) on one of its Ms, else
     * {@link System#nanoTime()} (a platform thread's timers live in the JVM-wide heap, on that
     * clock). Inside a synctest bubble timers run on the bubble's clock instead; see
     * {@link #whenAfter}.
     * Go: runtime.nanotime
     */
    public static long nanotime() {
        M mp = M.current();
        return mp != null ? mp.sched.nanotime() : System.nanoTime();
    }

    /**
     * A deadline d nanoseconds from now, saturating at Long.MAX_VALUE instead of overflowing
     * (Go: when() in time.go). Now is the caller's clock: its bubble's inside a synctest bubble
     * (Go: runtime.nanotime in a bubble), else {@link #nanotime()}; a timer armed with it must be
     * the caller's own (created in the same bubble, or outside every bubble), which
     * {@link #reset} checks.
     */
    public static long whenAfter(long d) {
        G gp = Scheduler.getg(); // read once: every sleep and timer arm comes here
        long now = gp == null ? nanotime() : gp.bubble != null ? gp.bubble.nanotime() : gp.sched.nanotime();
        long t = now + Math.max(0, d);
        return t < now ? Long.MAX_VALUE : t;
    }

    /**
     * Arms the timer to fire at {@code when} (nanotime) and then every {@code period}
     * nanoseconds if period &gt; 0. Returns whether the timer was pending before; for a channel
     * timer also whether a value from before was in flight or unreceived (it is discarded).
     * Can be executed by any thread.
     * Go: runtime/time.go timer.modify, timer.reset
     */
    public boolean reset(long when, long period) {
        if (when <= 0 || period < 0) {
            throw new IllegalArgumentException("timer when must be positive and period non-negative: " + when + ", " + period);
        }
        if (!realClock) {
            checkBubble("reset of");
        }
        if (sendLock == null) {
            boolean pending = modify(when, period);
            if (bubble != null && when <= bubble.nanotime()) {
                runDueInBubble(); // Go: a due bubble timer runs without waiting for the bubble to block
            }
            return pending;
        }
        synchronized (sendLock) {
            boolean pending = modify(when, period);
            return chan.timerDrain() | pending;
        }
    }

    /**
     * Fails when the caller's bubble is not this timer's: a goroutine (or platform thread)
     * outside the timer's bubble, or a bubble goroutine arming a timer created outside (its when
     * would be on the wrong clock). Scheduler threads running a park commit or a timer function
     * (no goroutine, but an M) are the runtime itself and pass. Go panics likewise
     * ("synctest timer accessed from outside bubble", "timer moved between synctest bubbles").
     */
    private void checkBubble(String op) {
        G gp = Scheduler.getg();
        if (gp == null ? bubble != null && M.current() == null : gp.bubble != bubble) {
            throw new IllegalStateException(bubble != null && (gp == null || gp.bubble == null)
                    ? op + " synctest timer from outside bubble"
                    : "timer moved between synctest bubbles");
        }
    }

    /**
     * A plain bubble timer was armed at or before the bubble's now (afterFunc(0)): run the due
     * timers at once, as the arming member, so a goroutine a timer function starts is a member
     * and {@code Synctest.await} waits for it. A commit on an M (no goroutine) never arms a due
     * timer (a sleep's when is in the future), so the caller is the member here.
     */
    private void runDueInBubble() {
        if (Bubble.ofCaller() == bubble) {
            bubble.timers.check(bubble.nanotime());
        }
    }

    /** The heap an unheaped timer goes into: its bubble's, else the caller's P's (or the JVM-wide one). */
    private TimerHeap homeHeap() {
        return bubble != null ? bubble.timers : TimerHeap.current();
    }

    /** reset's work; sendLock held for a channel timer. */
    private boolean modify(long when, long period) {
        for (;;) {
            TimerHeap h = ts;
            if (h == null) {
                h = homeHeap();
            }
            boolean wake = false;
            boolean pending;
            synchronized (h) {
                synchronized (this) {
                    TimerHeap cur = ts;
                    if (cur != null && cur != h) {
                        continue; // moved to another heap meanwhile (procresize, a spare P's return)
                    }
                    pending = this.when > 0;
                    long oldPeriod = this.period;
                    this.when = when;
                    this.period = period;
                    if (chan != null) {
                        seq++; // a firing that already took the old configuration sends nothing
                        if (oldPeriod == 0 && isSending > 0) {
                            pending = true;
                        }
                    }
                    long before = h.minWhen;
                    if (cur != null) {
                        h.fix(idx);
                    } else if (needsAdd()) {
                        h.add(this);
                    } else {
                        return pending; // a channel timer nobody waits on stays out of every heap
                    }
                    h.updateMinWhen();
                    wake = before == 0 || when < before;
                }
            }
            if (wake) {
                h.wake(when);
            }
            return pending;
        }
    }

    /** Whether an active timer that is in no heap must go into one. This monitor held. Go: needsAdd */
    private boolean needsAdd() {
        return ts == null && when > 0 && (chan == null || blocked > 0);
    }

    /**
     * Stops the timer. Returns whether it was pending (false: it already fired, its function
     * may be running right now, or it was never armed); for a channel timer, true also when its
     * value was in flight or unreceived (it is discarded: no receive after stop returns sees it).
     * Can be executed by any thread.
     * Go: runtime/time.go timer.stop
     */
    public boolean stop() {
        if (bubble != null) {
            checkBubble("stop of");
        }
        if (sendLock == null) {
            return stopTimer();
        }
        boolean pending;
        synchronized (sendLock) {
            pending = stopTimer();
        }
        return chan.timerDrain() | pending;
    }

    /** stop's work; sendLock held for a channel timer. */
    private boolean stopTimer() {
        for (;;) {
            TimerHeap h = ts;
            if (h == null) {
                synchronized (this) {
                    if (ts != null) {
                        continue;
                    }
                    return deactivate();
                }
            }
            synchronized (h) {
                synchronized (this) {
                    if (ts != h) {
                        continue;
                    }
                    h.removeAt(idx);
                    h.updateMinWhen();
                    return deactivate();
                }
            }
        }
    }

    /** This monitor held: when = 0, and for a channel timer squelch a firing in flight. */
    private boolean deactivate() {
        boolean pending = when > 0;
        when = 0;
        if (chan != null) {
            seq++;
            if (period == 0 && isSending > 0) {
                pending = true;
            }
        }
        return pending;
    }

    /** Whether the timer is pending (in a heap). Racy: for tests and diagnostics. */
    public boolean isPending() {
        return ts != null;
    }

    // =============================================================================================
    // Firing
    // =============================================================================================

    /**
     * Both the heap monitor (if heaped) and this monitor held; when is due at now. Advances or
     * clears when as a firing does, and returns the seq the firing must still find in
     * {@link #run}. The caller then releases both monitors and calls run.
     * Go: runtime/time.go unlockAndRun (the part under t.mu)
     */
    long take(long now) {
        long w = when;
        if (period > 0) {
            // Missed ticks are skipped, not replayed: the next tick is the first multiple of
            // period after now.
            long p = period;
            long next = w + p * (1 + (now - w) / p);
            when = next < w ? Long.MAX_VALUE : next;
        } else {
            when = 0;
            if (chan != null) {
                IS_SENDING.getAndAdd(this, 1);
            }
        }
        return seq;
    }

    /**
     * Calls the function of a firing prepared by {@link #take}, holding no heap or timer monitor.
     * A channel timer sends only if no stop or reset came in between (seq unchanged).
     * Go: runtime/time.go unlockAndRun (the part after t.mu)
     */
    void run(long takenSeq, long w, long delay) {
        if (sendLock == null) {
            f.fire(arg, w, delay);
            return;
        }
        synchronized (sendLock) {
            if (period == 0) {
                IS_SENDING.getAndAdd(this, -1); // committed: seq alone decides now
            }
            if (seq == takenSeq) {
                f.fire(arg, w, delay);
            }
        }
    }

    /**
     * A receive on this channel timer's channel is about to look at it: if the timer is due and
     * in no heap (nobody was blocked on it, so no M ran it), fire it now, so the value is there.
     * Called holding no lock.
     * Go: runtime/time.go timer.maybeRunChan
     */
    void maybeRunChan() {
        if (ts != null) {
            return; // in a heap: the scheduler fires it
        }
        long w;
        long takenSeq;
        long now;
        synchronized (this) {
            now = bubble != null ? bubble.nanotime() : nanotime();
            w = when;
            if (ts != null || w == 0 || w > now) {
                return;
            }
            takenSeq = take(now);
        }
        run(takenSeq, w, now - w);
    }

    /**
     * A receiver is about to block on this channel timer's channel: make sure the timer is in a
     * heap (the current P's) so that someone fires it. The channel's lock is held.
     * Go: runtime/chan.go blockTimerChan
     */
    void blockChan() {
        boolean add;
        synchronized (this) {
            blocked++;
            add = needsAdd();
        }
        if (!add) {
            return;
        }
        TimerHeap h = homeHeap();
        boolean wake = false;
        long w;
        synchronized (h) {
            synchronized (this) {
                w = when;
                if (needsAdd()) { // a racing maybeAdd, firing or stop may have got here first
                    long before = h.minWhen;
                    h.add(this);
                    h.updateMinWhen();
                    wake = before == 0 || w < before;
                }
            }
        }
        if (wake) {
            h.wake(w);
        }
    }

    /**
     * A receiver blocked on this channel timer's channel stopped waiting: the last one takes the
     * timer out of its heap, keeping when (the timer is still active). The channel's lock is
     * held (select) or not (plain receive).
     * Go: runtime/chan.go unblockTimerChan (Go marks it a zombie; here it leaves at once)
     */
    void unblockChan() {
        for (;;) {
            TimerHeap h = ts;
            if (h == null) {
                synchronized (this) {
                    if (ts != null) {
                        continue;
                    }
                    blocked--;
                    return;
                }
            }
            synchronized (h) {
                synchronized (this) {
                    if (ts != h) {
                        continue;
                    }
                    if (--blocked == 0) {
                        h.removeAt(idx);
                        h.updateMinWhen();
                    }
                    return;
                }
            }
        }
    }
}
