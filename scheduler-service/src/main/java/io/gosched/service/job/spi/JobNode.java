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

    /**
     * True if a node of the cluster that is present now (this one included) says it has the
     * application's job handler {@code handler} (in a cluster: the handler names of its entry in
     * the node registry, as last read, at most about a heartbeat old). A node that lacks a
     * handler passes the handler's jobs on; while no present node has it, the job stays queued
     * and its view says {@code waitingFor}. The default (one node) knows of no other node's
     * handlers: the job service asks its own handlers first.
     */
    default boolean hasHandlerSomewhere(String handler) {
        return false;
    }
}
