package io.gosched.cluster.job;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsContainer;
import io.gosched.cluster.testing.NatsFixture;
import io.gosched.cluster.testing.RequiresDocker;

/**
 * {@link NatsJobStoreContract} against NATS in a container ({@link NatsContainer}): skipped where no Docker engine
 * answers, failed there in CI ({@link RequiresDocker}).
 */
@RequiresDocker
class NatsJobStoreContainerTest extends NatsJobStoreContract {

    @Override
    protected NatsFixture startNats(Path dir) {
        return NatsContainer.start(dir);
    }
}
