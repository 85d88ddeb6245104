package io.gosched.runtime;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Sleeping. This first version runs a goroutine's sleep as a syscall: the P is let go while
 * the M sleeps, so other goroutines keep running, at the cost of a parked M per sleeper.
 * Per-P timer heaps that park only the G replace it.
 *
 * Go: runtime/time.go timeSleep
 */
final class Timers {

    private Timers() {
    }

    static void sleep(Duration d) {
        long nanos = d.toNanos();
        if (nanos <= 0) {
            Scheduler.checkpoint();
            return;
        }
        G gp = Scheduler.getg();
        if (gp == null) {
            parkFor(nanos);
            return;
        }
        Scheduler.checkpoint();
        Scheduler.entersyscall(gp);
        try {
            parkFor(nanos);
        } finally {
            Scheduler.exitsyscall(gp);
        }
    }

    private static void parkFor(long nanos) {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
