package io.gosched.bench;

/**
 * The shared state of the hog workload on the JVM peers: the stop flag the platform stopper
 * sets, and how far each hog got.
 */
public final class HogState {
    /** Set once by the stopper thread; the only thing the hog loop reads. */
    public volatile boolean stop;
    public final long[] iterations = new long[2];

    /**
     * The hog: a tight loop with no call, no allocation and no safe point of the runtime under test
     * (no Go.checkpoint, no yield); only the volatile read of the stop flag, so it ends when told.
     */
    public static long spin(HogState st) {
        long i = 0;
        while (!st.stop) i++;
        return i;
    }
}
