package io.gosched.service.channel.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Which node each named channel lives on, cluster-wide, and the forwarding of operations to a
 * channel's home (see the package comment for the guarantees).
 *
 * <p>Thread-safe. The forwarding methods never block: they answer with a {@link Mono} that ends
 * within the operation's timeout plus the directory's forwarding margin, with a value or with a
 * {@link io.gosched.service.error.ServiceException} (not found, closed, lost, refused) or a
 * {@link io.gosched.service.error.BackendUnavailableException}. The
 * registry methods may block on the network for a bounded time.
 */
public interface ChannelDirectory {

    /** This node's id. */
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

    /** Sends on a channel of another node; see the package comment for what the answer guarantees. */
    Mono<ChannelOutcome.Send> send(ChannelHome home, JsonNode value, Duration timeout);

    /** Receives from a channel of another node; the value is confirmed to the home once emitted. */
    Mono<ChannelOutcome.Recv> recv(ChannelHome home, Duration timeout);

    /** Closes a channel of another node. */
    Mono<Void> close(ChannelHome home);

    /** The state of a channel of another node, or empty if it does not exist there any more. */
    Mono<Optional<ChannelOutcome.State>> describe(ChannelHome home);

    /**
     * Deletes a channel of another node on its home (closed, its buffer discarded, its record
     * removed). A lost channel (its home is gone) is not forwarded: {@link #unregister} removes it.
     */
    Mono<Void> delete(ChannelHome home);

    /**
     * The states of every channel living on {@code node} as incarnation {@code incarnation}, sorted
     * by name: one request per page, not one per channel.
     *
     * @throws io.gosched.service.error.GoneException (in the Mono) if that node is gone
     */
    Mono<List<ChannelOutcome.State>> states(String node, String incarnation);

    /** Throws {@link io.gosched.service.error.BackendUnavailableException} while the directory cannot be reached. */
    void checkReachable();

    /**
     * Starts answering forwarded operations on this node's channels with {@code local}. Called
     * once, at start-up, before {@link #register}.
     */
    void serve(LocalChannels local);
}
