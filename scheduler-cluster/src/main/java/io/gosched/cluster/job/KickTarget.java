package io.gosched.cluster.job;

import java.nio.charset.StandardCharsets;

import io.gosched.service.job.JobSpec;
import io.gosched.service.job.spi.JobTicket;

/**
 * What a kick on {@code gosched.kick} says: which consumer its ticket waits on, so that a puller
 * asks that consumer and not all eleven (see {@link ConsumerKicks}). One
 * byte, the priority 0–9, for a ready ticket (the format of every kick before this one); {@code n:}
 * and the node id for a ticket pinned to a node.
 */
final class KickTarget {

    /** A ticket pinned to another node: nothing for this node to fetch. */
    static final int NOT_MINE = -1;
    /** A payload this version cannot place: the puller asks every consumer. */
    static final int UNKNOWN = -2;

    private static final byte[] PINNED = "n:".getBytes(StandardCharsets.US_ASCII);

    private KickTarget() {
    }

    static byte[] payload(JobTicket t) {
        if (t.node() == null) {
            return new byte[] {(byte) t.priority()};
        }
        byte[] node = t.node().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[PINNED.length + node.length];
        System.arraycopy(PINNED, 0, out, 0, PINNED.length);
        System.arraycopy(node, 0, out, PINNED.length, node.length);
        return out;
    }

    /**
     * The kicked consumer's index in the pull order (0: this node's pinned consumer; 1 + 9 - p:
     * {@code ready-p}), or {@link #NOT_MINE} or {@link #UNKNOWN}.
     */
    static int consumerIndex(byte[] data, String nodeId) {
        if (data != null && data.length == 1 && data[0] >= JobSpec.MIN_PRIORITY && data[0] <= JobSpec.MAX_PRIORITY) {
            return 1 + JobSpec.MAX_PRIORITY - data[0];
        }
        if (data != null && data.length > PINNED.length && data[0] == PINNED[0] && data[1] == PINNED[1]) {
            String node = new String(data, PINNED.length, data.length - PINNED.length, StandardCharsets.UTF_8);
            return node.equals(nodeId) ? 0 : NOT_MINE;
        }
        return UNKNOWN;
    }
}
