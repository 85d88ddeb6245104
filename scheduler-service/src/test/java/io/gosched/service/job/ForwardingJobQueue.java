package io.gosched.service.job;

import java.time.Duration;
import java.util.List;

import io.gosched.service.job.spi.JobLease;
import io.gosched.service.job.spi.JobQueue;
import io.gosched.service.job.spi.JobTicket;

/**
 * A queue that forwards every call to another: tests override the calls whose answers they bend.
 * It does not offer {@link JobQueue#poll} (whatever the other does), so the engine pulls from its
 * dispatcher thread, as it does from a queue across the network.
 */
class ForwardingJobQueue implements JobQueue {
    final JobQueue d;

    ForwardingJobQueue(JobQueue d) {
        this.d = d;
    }

    @Override
    public void enqueue(JobTicket ticket) {
        d.enqueue(ticket);
    }

    @Override
    public List<JobLease> pull(int room, Duration maxWait) throws InterruptedException {
        return d.pull(room, maxWait);
    }

    @Override
    public void withdraw(JobTicket ticket) {
        d.withdraw(ticket);
    }

    @Override
    public long depth() {
        return d.depth();
    }

    @Override
    public void onLost(LostHandler handler) {
        d.onLost(handler);
    }

    @Override
    public Duration leaseTime() {
        return d.leaseTime();
    }

    @Override
    public boolean holdsTicketOf(String jobId) {
        return d.holdsTicketOf(jobId);
    }
}
