package io.gosched.service.channel.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The operations on a channel of another node, carried to its home and answered from there, and
 * the home side of the same: this node's channels served to the others (see the package comment
 * for the guarantees).
 *
 * <p>Thread-safe. Nothing here blocks: an operation answers with a {@link Mono} that ends within
 * its timeout plus the forwarding margin, with a value, a
 * {@link io.gosched.service.error.ServiceException} (not found, closed, lost, refused) or a
 * {@link io.gosched.service.error.BackendUnavailableException}.
 */
public interface ChannelForwarder {

    /** Sends on a channel of another node; see the package comment for what the answer guarantees. */
    Mono<ChannelOutcome.Send> send(ChannelHome home, JsonNode value, Duration timeout);

    /** Receives from a channel of another node; the value is confirmed to the home once emitted. */
    Mono<ChannelOutcome.Recv> recv(ChannelHome home, Duration timeout);

    /**
     * Runs a select on {@code home}'s node, every case's channel living there, as one blocking
     * select; a taken value is confirmed to the home once emitted, put back when the caller cancels.
     * Errors as send's and recv's (a send case on a closed channel that fired: closed).
     */
    Mono<ChannelOutcome.Select> select(ChannelHome home, List<ChannelOutcome.SelectCase> cases, Duration timeout);

    /** Closes a channel of another node. */
    Mono<Void> close(ChannelHome home);

    /** The state of a channel of another node, or empty if it does not exist there any more. */
    Mono<Optional<ChannelOutcome.State>> describe(ChannelHome home);

    /**
     * Deletes a channel of another node on its home (closed, its buffer discarded, its record
     * removed). A lost channel (its home is gone) is not forwarded: the directory's
     * {@link ChannelDirectory#unregister} removes it.
     */
    Mono<Void> delete(ChannelHome home);

    /**
     * The states of every channel living on {@code node} as incarnation {@code incarnation}, sorted
     * by name: one request per page, not one per channel.
     *
     * @throws io.gosched.service.error.GoneException (in the Mono) if that node is gone
     */
    Mono<List<ChannelOutcome.State>> states(String node, String incarnation);

    /**
     * Starts answering the other nodes' operations on this node's channels with {@code local}.
     * Called once, at start-up, before any channel is registered.
     */
    void serve(LocalChannels local);

    /**
     * Starts answering the other nodes' selects over this node's channels with {@code selects};
     * called once, at start-up, before {@link #serve}. Without it a forwarded select is answered
     * "unknown" (503 at the caller).
     */
    default void serveSelects(LocalSelect selects) {
    }
}
