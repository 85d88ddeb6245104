package io.gosched.api.job.local;

import java.time.Clock;
import java.time.Duration;

import io.gosched.api.job.spi.JobQueue;
import io.gosched.api.job.spi.JobQueueContract;

/** {@link JobQueueContract} for the embedded queue: every "node" is the one queue of this process. */
class InMemoryJobQueueTest implements JobQueueContract {

    static final Duration ACK_WAIT = Duration.ofSeconds(1);
    final InMemoryJobQueue queue = new InMemoryJobQueue(Clock.systemUTC(), ACK_WAIT, 3);

    @Override
    public JobQueue queue(String node) {
        return queue;
    }

    @Override
    public Duration ackWait() {
        return ACK_WAIT;
    }

    @Override
    public int maxDeliver() {
        return 3;
    }
}
