package io.gosched.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A synctest bubble: a set of goroutines with their own fake clock and timer heap, whose clock
 * moves only when every goroutine in it is durably blocked. The runtime half of
 * {@code io.gosched.testing.Synctest} (users call that; this class is public only because the
 * testing package lives outside the runtime's).
 *
 * <p>Membership. The root goroutine is started by {@link #run}; every goroutine a member starts
 * is a member (newproc copies {@code G.bubble}), and so is one started by a bubble timer's
 * function (the driver runs timer functions as a member, see {@link #fireTimers}). Channels,
 * runtime timers and WaitGroups created by a member belong to the bubble, and using one from
 * outside it fails (Go panics), so nothing outside can wake a member behind the count's back.
 *
 * <p>Counting. {@code total} counts the live members, {@code blocked} those parked for a
 * {@link WaitReason#durable() durable} reason; both change under this monitor. A member counts
 * as blocked from the end of its park commit (parkM, after the commit released the channel's
 * lock, so the G is really on its wait queue) to its next transition out of WAITING
 * ({@link G#casgstatus} and {@link G#tryCasgstatus}, one null check each outside bubbles). A waker
 * that readies a member between the commit and {@link #parked} is seen: parked counts only a G
 * that is still WAITING, and {@code G.bubbleBlocked} makes the two idempotent. Every waker of a
 * durable wait is a member or the driver, and finishes its goready before it parks itself, so
 * the count never shows "all blocked" while a member is about to run.
 *
 * <p>Idle. When {@code blocked == total} and the driver is not running timer functions, the
 * bubble is idle: the goroutine in {@link #await} (if any) is woken first and time stands still;
 * otherwise the driver (the goroutine that called {@link #run}, not a member) wakes, runs the
 * bubble timers that are due, and if none is due jumps the clock to the earliest one. While it
 * runs timer functions the driver counts as a running member, as Go's does ({@code
 * firingTimers}): a function that readies a member and then starts a goroutine has not finished
 * its work when the member runs. With no timer at all it is a deadlock: {@link #run}
 * throws {@link DeadlockException} with Go's message and a dump of the members.
 *
 * Go: runtime/synctest.go synctestBubble, synctestRun, synctestWait
 */
public final class Bubble {

    /**
     * The instant a bubble's clock starts at (Go: midnight UTC 2000-01-01). Not Instant.parse:
     * that initializes java.time's formatters, milliseconds of cold class initialization (8–17
     * ms against 0.2–4 for this, measured in a fresh source-launched JVM) inside whichever
     * goroutine first makes a channel (Chan's constructor asks for its bubble), where it cannot
     * yield.
     */
    static final Instant EPOCH = Instant.ofEpochSecond(946_684_800L);
    /**
     * The bubble's nanotime at EPOCH. Positive, because a timer's when must be; far below any
     * real nanotime is not needed: bubble timers never meet real ones (they live in their own heap).
     */
    private static final long START = 1_000_000_000L;

    final Sched sched;
    /** Bubble timers: run only by the driver, when the bubble is idle. */
    final TimerHeap timers;
    /** Orders timers due at the same instant (see TimerHeap.checkShuffled). Driver only. */
    private final java.util.SplittableRandom random = new java.util.SplittableRandom();
    /** The fake nanotime. Written by the driver while every member is blocked; read by members. */
    private volatile long now = START;

    // ---- guarded by this monitor --------------------------------------------------------------
    private final Set<G> members = new HashSet<>();
    private int total;
    private int blocked;
    private final G driver;
    /** The driver is parked (or committing its park) and must be readied by whoever finds the bubble idle. */
    private boolean driverParked;
    /**
     * The driver is running bubble timers' functions. It then counts as a running member (Go: the
     * driver's bubble.active), so the bubble is not idle: a timer function may ready members and
     * then start a goroutine (a deadline's cancel, then its Context.afterFunc), and a member
     * readied first must not find the bubble idle in await() before that goroutine exists.
     */
    private boolean firingTimers;
    /** The member in await(), or null. */
    private G waiter;
    private boolean rootExited;
    private Throwable rootFailure;

    private Bubble(Sched sched, G driver) {
        this.sched = sched;
        this.driver = driver;
        this.timers = new TimerHeap(null, null);
    }

    // =============================================================================================
    // Public face (io.gosched.testing.Synctest)
    // =============================================================================================

    /**
     * Runs body as the root of a new bubble and returns once every goroutine of the bubble has
     * exited; rethrows body's exception. Called from a goroutine, the bubble lives on that
     * goroutine's runtime; called from any other thread, on a fresh runtime closed afterwards.
     *
     * @throws DeadlockException when every goroutine of the bubble is durably blocked and no
     *     bubble timer is pending
     * @throws IllegalStateException when called from inside a bubble (Go: nested bubbles)
     */
    public static void run(Runnable body) {
        java.util.Objects.requireNonNull(body, "body");
        G gp = Scheduler.getg();
        if (gp == null) {
            runOnFreshRuntime(body, SchedulerConfig.defaults());
            return;
        }
        if (gp.bubble != null) {
            throw new IllegalStateException("synctest.Run called from within a synctest bubble");
        }
        if (gp.status() == G.SYSCALL || gp.lockedm != null) {
            throw new IllegalStateException("synctest: the bubble's caller must be a plain goroutine (not in Go.syscall or lockOSThread)");
        }
        Bubble b = new Bubble(gp.sched, gp);
        gp.bubble = b; // so the root inherits it; the caller itself is never counted
        try {
            gp.sched.scheduler.newproc(() -> b.root(body), gp);
        } finally {
            gp.bubble = null;
        }
        b.drive();
    }

    /**
     * {@link #run} on a fresh runtime with this configuration, closed afterwards (without waiting
     * for goroutines a deadlock left blocked: they are abandoned with the runtime).
     */
    public static void runOnFreshRuntime(Runnable body, SchedulerConfig config) {
        GoRuntime rt = GoRuntime.start(config);
        boolean clean = false;
        try {
            rt.run(() -> {
                run(body);
                return null;
            });
            clean = true;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            rt.shutdown(clean ? rt.config().shutdownTimeout() : Duration.ZERO);
        }
    }

    /**
     * Returns once every other goroutine of the caller's bubble is durably blocked. Time does not
     * move while a goroutine waits here. Go: testing/synctest.Wait
     *
     * @throws IllegalStateException outside a bubble, or when another goroutine of the bubble is
     *     already waiting
     */
    public static void await() {
        G gp = Scheduler.getg();
        Bubble b = gp != null ? gp.bubble : null;
        if (b == null) {
            throw new IllegalStateException("goroutine is not in a bubble");
        }
        synchronized (b) {
            if (b.waiter != null) {
                throw new IllegalStateException("wait already in progress");
            }
            b.waiter = gp;
        }
        // Woken by parked()/exited() once everyone else is blocked, or at once by our own
        // parked() when they already are.
        Scheduler.gopark(null, null, WaitReason.SYNCTEST_WAIT);
    }

    /** The caller's clock: its bubble's inside a bubble, else the real clock. */
    public static Instant now() {
        Bubble b = ofCaller();
        return b != null ? b.instantAt(b.now) : Instant.now();
    }

    /** Whether the caller is a goroutine in a bubble. */
    public static boolean inBubble() {
        return ofCaller() != null;
    }

    /**
     * The caller's bubble, or null outside one: for a sync object that belongs to the bubble of
     * its first use rather than of its maker (sync.WaitGroup, Go: internal/synctest.Associate).
     */
    public static Bubble current() {
        return ofCaller();
    }

    // =============================================================================================
    // Runtime hooks
    // =============================================================================================

    /** The bubble of the calling goroutine, or null (not a goroutine, or not in a bubble). */
    static Bubble ofCaller() {
        G gp = Scheduler.getg();
        return gp != null ? gp.bubble : null;
    }

    /** The bubble's nanotime. */
    long nanotime() {
        return now;
    }

    /** The Instant of bubble nanotime t. */
    Instant instantAt(long t) {
        return EPOCH.plusNanos(t - START);
    }

    /** newg, created by a member (or the driver for the root), joins. Before newg is queued. */
    synchronized void started(G newg) {
        newg.bubble = this;
        newg.bubbleBlocked = false;
        members.add(newg);
        total++;
    }

    /** A member ended. Executed only by the M that ran it, in goexit0. */
    void exited(G gp) {
        G wake;
        synchronized (this) {
            members.remove(gp);
            gp.bubble = null;
            total--;
            wake = wakeIfIdleLocked();
        }
        if (wake != null) {
            Scheduler.goready(wake);
        }
    }

    /**
     * A member's park committed (parkM). Counts it as durably blocked if it still waits and its
     * reason is durable. Executed by the M that parked gp, holding no lock.
     */
    void parked(G gp) {
        G wake;
        synchronized (this) {
            if ((gp.status() & ~G.SCAN) != G.WAITING || gp.bubbleBlocked) {
                return; // readied meanwhile (or counted by a racing parked of its next park)
            }
            WaitReason r = gp.waitreason();
            if (r == null || !r.durable()) {
                return;
            }
            gp.bubbleBlocked = true;
            blocked++;
            wake = wakeIfIdleLocked();
        }
        if (wake != null) {
            Scheduler.goready(wake);
        }
    }

    /** A member left WAITING (readied, or its commit failed). Called by G's status changes. */
    synchronized void unparked(G gp) {
        if (gp.bubbleBlocked) {
            gp.bubbleBlocked = false;
            blocked--;
        }
    }

    /** Monitor held: the goroutine to ready because the bubble is idle or empty, or null. */
    private G wakeIfIdleLocked() {
        assert Thread.holdsLock(this);
        if (blocked != total || firingTimers) {
            return null;
        }
        if (total > 0 && waiter != null) {
            G w = waiter;
            waiter = null;
            return w;
        }
        if (driverParked) {
            driverParked = false;
            return driver;
        }
        return null; // the driver is running: it looks again before it parks (DRIVER_PARK)
    }

    // =============================================================================================
    // The driver
    // =============================================================================================

    /** The root member's body: body, with its failure kept for run() to rethrow. */
    private void root(Runnable body) {
        try {
            body.run();
        } catch (Go.Goexit exit) {
            // runtime.Goexit in the root: the bubble goes on until its goroutines end, as in Go
        } catch (Throwable t) {
            synchronized (this) {
                rootFailure = t;
            }
        } finally {
            synchronized (this) {
                rootExited = true;
            }
        }
    }

    /** The driver's park commit: park unless the bubble is already idle or empty. */
    private static final ParkCommit DRIVER_PARK = (gp, arg) -> {
        Bubble b = (Bubble) arg;
        synchronized (b) {
            if (b.blocked == b.total && (b.total == 0 || b.waiter == null)) {
                return false; // nothing would wake us: act now
            }
            b.driverParked = true;
            return true;
        }
    };

    /** The driver's loop: sleep until idle, move time or report a deadlock; until no member is left. */
    private void drive() {
        for (;;) {
            Scheduler.gopark(DRIVER_PARK, this, WaitReason.SYNCTEST_RUN);
            boolean done;
            boolean rootGone;
            synchronized (this) {
                if (blocked != total || (total > 0 && waiter != null)) {
                    continue; // woken early (a commit failed after the count): look again
                }
                done = total == 0;
                rootGone = rootExited;
            }
            if (done) {
                break;
            }
            // Once the root has exited, time stands still (Go): blocked members that remain can
            // only be waiting for each other or for a clock no one will wait out.
            if (rootGone || !fireTimers()) {
                DeadlockException d = new DeadlockException(rootGone
                        ? "deadlock: main bubble goroutine has exited but blocked goroutines remain"
                        : "deadlock: all goroutines in bubble are blocked", dumpMembers());
                Throwable f;
                synchronized (this) {
                    f = rootFailure;
                    members.clear(); // abandoned: they can never run again
                }
                if (f != null) {
                    f.addSuppressed(d);
                    rethrow(f);
                }
                throw d;
            }
        }
        Throwable f;
        synchronized (this) {
            f = rootFailure;
        }
        if (f != null) {
            rethrow(f);
        }
    }

    /**
     * Every member is durably blocked: runs the bubble timers due now, or else moves the clock to
     * the earliest one and runs it. Returns false when there is no timer (a deadlock). Timer
     * functions run as a member, so a goroutine one starts (afterFunc) joins the bubble.
     * Executed only by the driver.
     */
    private boolean fireTimers() {
        long next = timers.wakeTime();
        if (next == 0) {
            return false;
        }
        if (next > now) {
            now = next; // volatile: members read it once they run again
        }
        synchronized (this) {
            firingTimers = true;
        }
        driver.bubble = this;
        G wake;
        try {
            timers.checkShuffled(now, random);
        } finally {
            driver.bubble = null;
            synchronized (this) {
                firingTimers = false;
                // The timer functions may have readied a member that has since parked in await(),
                // its parked() finding the driver busy: the driver is the one to look again.
                wake = wakeIfIdleLocked();
            }
        }
        if (wake != null) {
            Scheduler.goready(wake);
        }
        return true;
    }

    /** The members' goroutine dump, for a deadlock report. */
    private String dumpMembers() {
        Set<Long> ids = new HashSet<>();
        synchronized (this) {
            for (G g : members) {
                ids.add(g.goid);
            }
        }
        List<GoroutineInfo> mine = new ArrayList<>();
        for (GoroutineInfo gi : sched.runtime.goroutines()) {
            if (ids.contains(gi.id())) {
                mine.add(gi);
            }
        }
        return GoRuntime.traceback(mine);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void rethrow(Throwable t) throws T {
        throw (T) t;
    }
}
