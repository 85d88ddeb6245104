package io.gosched.service.job.spi;

/**
 * The node the job service runs on, as far as jobs care: its id (what a record's
 * {@link JobRecord.Status#node()} names, and what a pinned {@link JobTicket#node()} addresses) and
 * whether it is the one node that runs cluster-wide chores (retention) now.
 */
public interface JobNode {

    /** This node's id; matches {@link JobTicket#NODE_ID}. */
    String id();

    /** True while this node is the cluster's leader; may change at any time. */
    boolean isLeader();

    /**
     * True if the node {@code nodeId} is a member of the cluster now (in a cluster: its heartbeat
     * is current). The leader takes the jobs left {@code running} by a node that is not, once
     * their tickets are gone (the job service's orphan sweep, {@code Chores}). The default knows of no departures.
     */
    default boolean isPresent(String nodeId) {
        return true;
    }
}
