package io.gosched.cluster.job;

import java.nio.file.Path;

import io.gosched.cluster.testing.NatsContainer;
import io.gosched.cluster.testing.NatsFixture;
import org.testcontainers.junit.jupiter.Testcontainers;

/** {@link NatsJobQueueContract} against the official NATS image; skipped where there is no Docker. */
@Testcontainers(disabledWithoutDocker = true)
class JobQueueContainerTest extends NatsJobQueueContract {

    @Override
    protected NatsFixture startNats(Path dir) {
        return NatsContainer.start(dir);
    }
}
