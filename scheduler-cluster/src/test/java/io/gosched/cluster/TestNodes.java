package io.gosched.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.gosched.cluster.testing.NatsFixture;

import org.springframework.util.unit.DataSize;

/**
 * Nodes for the cluster tests: each a connection of its own to the fixture's server, as separate
 * processes would have; closed (in reverse order) by {@link #close()}.
 */
public final class TestNodes implements AutoCloseable {

    private final NatsFixture nats;
    private final List<AutoCloseable> open = new ArrayList<>();

    public TestNodes(NatsFixture nats) {
        this.nats = nats;
    }

    /** Properties of a test node: short ack wait and heartbeat so that takeovers happen within a test. */
    public static ClusterProperties properties(String url, String node, Duration ackWait, int maxDeliver) {
        return new ClusterProperties(new ClusterProperties.Nats(url), node, ackWait, maxDeliver, 1, Duration.ofSeconds(10),
                Duration.ofSeconds(1), Duration.ofMillis(500), DataSize.ofMegabytes(64), DataSize.ofMegabytes(64), true);
    }

    public ClusterConnection connect(String node) {
        return connect(properties(nats.url(), node, Duration.ofSeconds(1), 3));
    }

    public ClusterConnection connect(ClusterProperties p) {
        return track(ClusterConnection.connect(p));
    }

    public synchronized <T extends AutoCloseable> T track(T c) {
        open.add(c);
        return c;
    }

    @Override
    public synchronized void close() {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                // closing what a test left behind: the next one still gets closed
            }
        }
        open.clear();
    }

}
