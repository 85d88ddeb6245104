package io.gosched.bench;

/**
 * One implementation of every {@link BenchWorkload}, on one concurrency runtime. The same peer object
 * runs many rounds; a peer owns its runtime (threads, pools) and releases it in {@link #close()}.
 *
 * <p>Each method times only the workload itself, from inside the runtime (the "main goroutine"),
 * so that runtime start-up is not measured, and returns the check value the driver verifies.
 */
public interface Peer extends AutoCloseable {
    /** Short name used on the command line and in tables: gosched, vt, kotlin. */
    String name();

    /** Versions of what this peer runs on, for the results file. */
    String version();

    Result spawn(long n) throws Exception;

    Result pingpong(long n) throws Exception;

    /** capacity 0 is the unbuffered prodcons0. */
    Result prodcons(long n, int capacity) throws Exception;

    Result chain(long n, long traversals) throws Exception;

    Result forkjoin(int n) throws Exception;

    Result timers(long n, long sleeps) throws Exception;

    Result hog(long millis) throws Exception;

    Result select(long n) throws Exception;

    Result gosched(long n) throws Exception;

    /**
     * n goroutines parked in a receive on their own channels, after warm-up passes of
     * {@code warmup} goroutines ({@link Measures#parkedRun}).
     */
    Result parked(long n, long warmup) throws Exception;

    /** n wake-ups of a parked receiver from a platform thread ({@link Measures#driveWakeups}). */
    Result wakeup(long n) throws Exception;

    default Result run(BenchWorkload w, long n, long m) throws Exception {
        return switch (w) {
            case SPAWN -> spawn(n);
            case PINGPONG, PINGPONG1 -> pingpong(n);
            case PRODCONS -> prodcons(n, (int) m);
            case PRODCONS0 -> prodcons(n, 0);
            case CHAIN, CHAIN1 -> chain(n, m);
            case FORKJOIN -> forkjoin((int) n);
            case TIMERS -> timers(n, m);
            case HOG -> hog(n);
            case SELECT -> select(n);
            case GOSCHED -> gosched(n);
            case PARKED -> parked(n, m);
            case WAKEUP -> wakeup(n);
        };
    }

    @Override
    default void close() {}
}
