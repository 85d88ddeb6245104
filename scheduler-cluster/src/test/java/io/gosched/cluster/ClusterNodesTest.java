package io.gosched.cluster;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsFixture;
import io.gosched.cluster.testing.NatsServer;

/** {@link ClusterNodesContract} against Debian's nats-server; skipped, naming the binary, without it. */
class ClusterNodesTest extends ClusterNodesContract {

    @Override
    protected NatsFixture startNats(Path dir) {
        return NatsServer.start(dir);
    }
}
