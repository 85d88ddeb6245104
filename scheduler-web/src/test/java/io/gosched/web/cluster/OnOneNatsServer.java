package io.gosched.web.cluster;

import io.gosched.cluster.testing.NatsServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The set-up every end-to-end cluster test shares: one real nats-server (Debian's binary, a free
 * loopback port, a store in the test's temporary directory) started before each test, and every
 * node the test started closed after it, then the server. Nodes join {@link #nodes} through
 * {@link #node} and {@link #forked}, so a failing test leaves no JVM or server behind.
 */
abstract class OnOneNatsServer {

    @TempDir
    Path dir;
    NatsServer nats;
    final List<ClusterNode> nodes = new ArrayList<>();

    @BeforeEach
    void startNats() {
        nats = NatsServer.start(dir.resolve("nats"));
    }

    @AfterEach
    void stopNodesThenNats() {
        for (ClusterNode n : nodes) {
            try {
                n.close();
            } catch (RuntimeException e) {
                // the next one still has to go
            }
        }
        nats.close();
    }

    /** A node in this JVM, in a Spring context of its own. */
    ClusterNode node(String id, String... extra) {
        ClusterNode n = ClusterNode.inJvm(nats.url(), id, extra);
        nodes.add(n);
        return n;
    }

    /** A node in this JVM with beans of the test's own (by bean name), as an application adds them. */
    ClusterNode node(String id, java.util.Map<String, Object> beans, String... extra) {
        ClusterNode n = ClusterNode.inJvm(nats.url(), id, beans, extra);
        nodes.add(n);
        return n;
    }

    /** A node in a JVM of its own, for a test that SIGKILLs it. */
    ClusterNode forked(String id, String... extra) throws Exception {
        ClusterNode n = ClusterNode.forked(dir, nats.url(), id, extra);
        nodes.add(n);
        return n;
    }
}
