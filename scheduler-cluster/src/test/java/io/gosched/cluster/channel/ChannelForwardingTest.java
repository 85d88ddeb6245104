package io.gosched.cluster.channel;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsFixture;
import io.gosched.cluster.testing.NatsServer;

/** {@link ChannelForwardingContract} against Debian's nats-server; skipped, naming the binary, without it. */
class ChannelForwardingTest extends ChannelForwardingContract {

    @Override
    protected NatsFixture startNats(Path dir) {
        return NatsServer.start(dir);
    }
}
