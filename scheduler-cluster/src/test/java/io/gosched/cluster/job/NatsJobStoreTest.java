package io.gosched.cluster.job;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsFixture;
import io.gosched.cluster.testing.NatsServer;

/** {@link NatsJobStoreContract} against Debian's nats-server; skipped, naming the binary, without it. */
class NatsJobStoreTest extends NatsJobStoreContract {

    @Override
    protected NatsFixture startNats(Path dir) {
        return NatsServer.start(dir);
    }
}
