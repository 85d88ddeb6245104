package io.gosched.api.job.spi;

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
}
