package io.gosched.cluster.job;

import java.time.Instant;

import io.gosched.service.job.spi.JobTicket;
import io.gosched.cluster.ClusterLayout;
import io.nats.client.impl.Headers;

/** A {@link JobTicket} as the headers of its message (the body is empty): readable in {@code nats stream view}. */
final class TicketMessages {

    private TicketMessages() {}

    static Headers headers(JobTicket t) {
        Headers h = new Headers();
        h.put(ClusterLayout.H_JOB, t.jobId());
        h.put(ClusterLayout.H_TICKET, Long.toString(t.number()));
        h.put(ClusterLayout.H_PRIORITY, Integer.toString(t.priority()));
        if (t.notBefore() != null) {
            h.put(ClusterLayout.H_NOT_BEFORE, t.notBefore().toString());
        }
        if (t.node() != null) {
            h.put(ClusterLayout.H_NODE, t.node());
        }
        return h;
    }

    /** @throws IllegalArgumentException when the headers are not a ticket's */
    static JobTicket ticket(Headers h) {
        if (h == null || h.getFirst(ClusterLayout.H_JOB) == null) {
            throw new IllegalArgumentException("not a job ticket: no " + ClusterLayout.H_JOB + " header");
        }
        try {
            String nb = h.getFirst(ClusterLayout.H_NOT_BEFORE);
            return new JobTicket(h.getFirst(ClusterLayout.H_JOB), Long.parseLong(h.getFirst(ClusterLayout.H_TICKET)),
                    Integer.parseInt(h.getFirst(ClusterLayout.H_PRIORITY)), nb == null ? null : Instant.parse(nb),
                    h.getFirst(ClusterLayout.H_NODE));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("malformed job ticket headers " + h + ": " + e.getMessage(), e);
        }
    }
}
