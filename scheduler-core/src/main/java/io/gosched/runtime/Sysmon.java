package io.gosched.runtime;

import java.util.concurrent.locks.LockSupport;

/**
 * The system monitor: a dedicated platform thread without a P that preempts goroutines which
 * ran past their quantum and retakes Ps from Ms stuck in syscalls.
 *
 * <p>Sleep schedule as Go's: 20 µs while it keeps finding work, doubling after 50 idle rounds
 * (about 1 ms), up to 10 ms.
 *
 * Go: runtime/proc.go sysmon, retake, preemptone
 */
final class Sysmon implements Runnable {

    static final long MIN_DELAY_NANOS = 20_000;
    static final long MAX_DELAY_NANOS = 10_000_000;
    /** A P in a syscall with no local work and others able to run is left alone this long. */
    static final long SYSCALL_GRACE_NANOS = 10_000_000;

    private final Sched sched;
    private final Thread thread;
    private final long quantumNanos;
    private volatile boolean stopped;

    Sysmon(Sched sched) {
        this.sched = sched;
        this.quantumNanos = sched.config.preemptQuantum().toNanos();
        this.thread = new Thread(sched.threadGroup, this, sched.threadGroup.getName() + "-sysmon");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    boolean awaitStopped(long millis) {
        try {
            thread.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    @Override
    public void run() {
        int idle = 0;
        long delay = MIN_DELAY_NANOS;
        while (!stopped) {
            if (idle == 0) {
                delay = MIN_DELAY_NANOS;
            } else if (idle > 50) {
                delay = Math.min(delay * 2, MAX_DELAY_NANOS);
            }
            LockSupport.parkNanos(this, delay);
            if (stopped) {
                return;
            }
            long now = sched.config.nanoClock().getAsLong();
            idle = retake(now) > 0 ? 0 : idle + 1;
        }
    }

    /**
     * Preempts Gs that ran a whole quantum and retakes Ps whose M is in a syscall.
     * Returns the number of Ps retaken.
     * Go: runtime/proc.go retake
     */
    int retake(long now) {
        int n = 0;
        P[] allp = sched.allp;
        int procs = Math.min(sched.gomaxprocs, allp.length);
        for (int i = 0; i < procs; i++) {
            P pp = allp[i];
            int s = pp.status();
            boolean sysretake = false;
            if (s == P.RUNNING || s == P.SYSCALL) {
                long t = pp.schedtick();
                if (pp.sysmonSchedtick != t) {
                    pp.sysmonSchedtick = t;
                    pp.sysmonSchedwhen = now;
                } else if (pp.sysmonSchedwhen + quantumNanos <= now) {
                    preemptone(pp);
                    // A P in a syscall cannot be preempted: retake it instead.
                    sysretake = true;
                }
            }
            if (s == P.SYSCALL) {
                long t = pp.syscalltick();
                if (!sysretake && pp.sysmonSyscalltick != t) {
                    // Retake only after the P has been in the same syscall for a whole tick.
                    pp.sysmonSyscalltick = t;
                    pp.sysmonSyscallwhen = now;
                    continue;
                }
                if (pp.runq.isEmpty() && sched.nmspinning.get() + sched.npidle.get() > 0
                        && pp.sysmonSyscallwhen + SYSCALL_GRACE_NANOS > now) {
                    continue;
                }
                if (pp.casStatus(P.SYSCALL, P.IDLE)) {
                    n++;
                    pp.incSyscalltick();
                    sched.syscallHandoffs.incrementAndGet();
                    sched.scheduler.handoffp(pp);
                }
            }
        }
        return n;
    }

    /**
     * Asks the G running on pp to yield at its next safe point.
     * Go: runtime/proc.go preemptone
     */
    static boolean preemptone(P pp) {
        M mp = pp.m;
        if (mp == null) {
            return false;
        }
        G gp = mp.curg;
        if (gp == null) {
            return false;
        }
        gp.preempt = true;
        return true;
    }
}
