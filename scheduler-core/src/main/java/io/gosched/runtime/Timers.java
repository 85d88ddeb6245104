package io.gosched.runtime;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Sleeping and the scheduler's timer hooks.
 *
 * <p>{@code Go.sleep} parks only the goroutine: its timer goes into the heap of the P it ran on,
 * armed in the park commit, after the goroutine is already WAITING, so a very short sleep
 * cannot fire before the park completes (Go's resetForSleep). When it fires, {@link
 * Scheduler#goready} puts the sleeper into runnext of whichever P ran the timer. A sleep is
 * never early: the timer fires only once nanotime() has reached the deadline.
 *
 * Go: runtime/time.go timeSleep, goroutineReady
 */
final class Timers {

    private Timers() {
    }

    /** The timer function of a sleeping goroutine. Go: goroutineReady */
    private static final RuntimeTimer.Func GOROUTINE_READY = (arg, when, delay) -> Scheduler.goready((G) arg);

    /** The park commit of a sleep: arm the G's timer now that it is parked. Go: resetForSleep */
    private static final ParkCommit RESET_FOR_SLEEP = (gp, arg) -> {
        SleepTimer t = gp.sleepTimer;
        t.reset(t.sleepWhen, 0);
        return true;
    };

    /**
     * A goroutine's sleep timer (Go: gp.timer), carrying the deadline its park commit arms it
     * with (Go: gp.sleepWhen). The deadline lives here and not in the G: only goroutines that
     * sleep pay its 8 bytes, and a G without it is 8 bytes smaller (96 bytes with compact headers).
     */
    static final class SleepTimer extends RuntimeTimer {
        /** Written by the sleeping G before it parks, read by its park commit on the same M. */
        long sleepWhen;

        SleepTimer(G gp) {
            super(GOROUTINE_READY, gp);
        }
    }

    /**
     * time.Sleep. In a goroutine: parks on the current P's timer heap (inside Go.procPin it
     * fails as every park does: a pinned goroutine cannot block). On a platform thread: parks
     * the thread (never early either).
     * Can be executed by any thread.
     * Go: runtime/time.go timeSleep
     */
    static void sleep(Duration d) {
        long nanos = saturatedNanos(d);
        if (nanos <= 0) {
            Scheduler.checkpoint();
            return;
        }
        G gp = Scheduler.getg();
        if (gp == null) {
            parkFor(nanos);
            return;
        }
        if (gp.status() == G.SYSCALL) {
            Scheduler.syscallCallback(gp, () -> {
                sleep(d);
                return null;
            });
            return;
        }
        if (gp.sleepTimer == null || gp.sleepTimer.bubble != gp.bubble) {
            // Made by gp itself, so a bubble goroutine's sleep is on its bubble's clock and heap.
            gp.sleepTimer = new SleepTimer(gp);
        }
        gp.sleepTimer.sleepWhen = RuntimeTimer.whenAfter(nanos);
        Scheduler.gopark(RESET_FOR_SLEEP, null, WaitReason.SLEEP);
    }

    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    private static void parkFor(long nanos) {
        long deadline = RuntimeTimer.whenAfter(nanos);
        for (long left = nanos; left > 0; left = deadline - RuntimeTimer.nanotime()) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * Runs pp's expired timers and counts them on pp. Returns the next when of pp's heap after
     * running them (0 = none).
     * Executed only by the M holding pp.
     * Go: runtime/proc.go checkTimers
     */
    static long checkTimers(P pp, long now) {
        assert Scheduler.ownedByCaller(pp) : "checkTimers: not the M holding " + pp;
        int ran = pp.timers.check(now);
        if (ran > 0) {
            pp.count(P.C_TIMERS_FIRED, ran);
        }
        return pp.timers.wakeTime();
    }
}
