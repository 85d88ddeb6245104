package io.gosched.service.job.memory;

import io.gosched.service.job.spi.JobNode;

/**
 * The one node of a service whose jobs live in its own memory: it leads (there is nobody else),
 * every node it knows of is present, and the views do not name it.
 */
public record SoleNode(String id) implements JobNode {

    /** The id a sole node goes by. */
    public static final String ID = "local";

    public SoleNode() {
        this(ID);
    }

    @Override
    public boolean isLeader() {
        return true;
    }
}
