package io.gosched.cluster.testing;

/**
 * A NATS server with JetStream that a test started and will stop: Debian's binary as a child
 * process ({@link NatsServer}, {@link NatsCluster}) or a container ({@link NatsContainer}).
 * Its store lives in a directory the test owns, so a killed server restarts with its messages.
 */
public interface NatsFixture extends AutoCloseable {

    /** The client URL(s), comma-separated for a cluster: what {@code gosched.cluster.nats.url} takes. */
    String url();

    /** Kills the server without warning (SIGKILL): no flush, no goodbye to clients. The store stays. */
    void kill();

    /** Starts the server again on the same store (and, where the fixture can, the same port). */
    void restart();

    /** True if {@link #restart()} keeps {@link #url()}, so clients reconnect by themselves. */
    boolean restartKeepsUrl();

    /** The last lines the server logged, for failure messages. */
    String logTail();

    /** Stops the server (gracefully, then forcibly) and frees its port. Idempotent. */
    @Override
    void close();
}
