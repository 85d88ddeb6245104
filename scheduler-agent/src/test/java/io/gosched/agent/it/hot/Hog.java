package io.gosched.agent.it.hot;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Loops without a single safe point of the runtime (no call into gosched, no allocation), in a
 * package the integration tests name to the agent: the agent's checks are their only way to
 * yield. Identical twin of {@code cold.ColdHog}, which the agent is not told about.
 */
public final class Hog {
    private Hog() {
    }

    /** Counts until stop is set. */
    public static long spin(Stop stop) {
        long i = 0;
        while (!stop.stop) {
            i++;
        }
        return i;
    }

    /** Go's TestPreemption helper: spins (calling a function each turn) until x holds v. */
    public static void spinUntil(AtomicInteger x, int v) {
        while (x.get() != v) {
            spinStep();
        }
    }

    private static void spinStep() {
        // A call without a loop: only the entry check the agent puts here can preempt.
    }

    /** The flag a platform thread sets to end a hog. */
    public static final class Stop {
        public volatile boolean stop;
    }
}
