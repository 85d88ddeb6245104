package io.gosched.service.channel.spi;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Which node each named channel lives on, cluster-wide: the registry of homes. Reaching a home is
 * the {@link ChannelForwarder}'s (see the package comment for the guarantees).
 *
 * <p>Thread-safe. The methods may block on the network for a bounded time; call them off event
 * loops and goroutines.
 */
public interface ChannelDirectory {

    /** This node's id; null on a node that has no other to tell it from (its views name no node). */
    String localNode();

    /** This process's incarnation (see {@link ChannelHome#incarnation()}). */
    String localIncarnation();

    /**
     * Records that channel {@code name} lives on this node. Names are unique cluster-wide.
     *
     * @return the home now recorded
     * @throws io.gosched.service.error.ConflictException CHANNEL_EXISTS if the name is taken (on any node)
     */
    ChannelHome register(String name, int capacity, Instant createdAt);

    /**
     * Removes the record of a channel that lives here, or of a lost one (its home is gone, so any
     * node may delete it); false if it lives on another running node or is not recorded.
     */
    boolean unregister(String name);

    /** Where {@code name} lives, or empty if no such channel is recorded. */
    Optional<ChannelHome> home(String name);

    /** Every recorded channel, sorted by name. */
    List<ChannelHome> list();

    /** True if {@code home}'s node is running as that incarnation (its heartbeat is fresh). */
    boolean isAlive(ChannelHome home);

    /** Throws {@link io.gosched.service.error.BackendUnavailableException} while the directory cannot be reached. */
    void checkReachable();

    /**
     * True if other nodes record their channels here too (a cluster's directory, the default):
     * views then name each channel's home node. False where this node is the only one.
     */
    default boolean isShared() {
        return true;
    }
}
