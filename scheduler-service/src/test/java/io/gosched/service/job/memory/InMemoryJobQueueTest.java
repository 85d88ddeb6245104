package io.gosched.service.job.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobQueueContract;
import io.gosched.service.job.spi.JobTicket;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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

    /** The poll a finishing attempt makes on its goroutine: what is ready now, in pull order, never a wait. */
    @Test
    void aPollTakesWhatIsReadyInOrderWithoutWaiting() {
        assertThat(queue.pollsWithoutBlocking()).isTrue();
        assertThat(queue.poll(4)).isEmpty();
        queue.enqueue(JobTicket.first("low", 1, null));
        queue.enqueue(JobTicket.first("later", 9, Instant.now().plusSeconds(60)));
        queue.enqueue(JobTicket.first("high", 9, null));
        queue.enqueue(JobTicket.first("low2", 1, null));
        assertThat(queue.poll(0)).isEmpty();
        List<JobLease> got = queue.poll(2);
        assertThat(got).extracting(l -> l.ticket().jobId()).containsExactly("high", "low");
        assertThat(queue.poll(5)).extracting(l -> l.ticket().jobId()).containsExactly("low2"); // not the delayed one
        assertThat(queue.poll(5)).isEmpty();
        assertThat(queue.depth()).isEqualTo(1);
        got.forEach(JobLease::complete);
    }
}
