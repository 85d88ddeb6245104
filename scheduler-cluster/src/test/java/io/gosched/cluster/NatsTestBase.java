package io.gosched.cluster;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fresh NATS server per test, from the fixture the subclass names (the Debian binary or the
 * container), and the test's nodes on it; both stopped after the test.
 */
public abstract class NatsTestBase {

    @TempDir
    protected Path dir;
    protected NatsFixture nats;
    protected TestNodes nodes;

    /** Starts the server this variant of the tests runs against, with its store under {@code dir}. */
    protected abstract NatsFixture startNats(Path dir);

    @BeforeEach
    void startServer() {
        nats = startNats(dir);
        nodes = new TestNodes(nats);
    }

    @AfterEach
    void stopServer() {
        if (nodes != null) {
            nodes.close();
        }
        if (nats != null) {
            nats.close();
        }
    }
}
