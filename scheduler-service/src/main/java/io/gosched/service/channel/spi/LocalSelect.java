package io.gosched.service.channel.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Selects over the channels living on this node, as the {@link ChannelForwarder} runs forwarded
 * ones on the home: the runtime's own select, run by a goroutine that parks nobody else.
 */
public interface LocalSelect {

    /** A select under way. */
    interface Running {

        /**
         * Completes with the case that fired (a receive's value already out of its channel and
         * its budget), or with none fired and the reason given to {@link #stop}; exceptionally
         * with the domain's {@code ConflictException} when a send case on a closed channel fired.
         */
        CompletableFuture<ChannelOutcome.Select> result();

        /**
         * Ends the wait: the select then ends with no case fired, or with the case that beat the
         * stop, whose outcome stands (and {@link #result} says which). Idempotent; never blocks.
         */
        void stop(String reason);
    }

    /**
     * Starts a select over {@code cases}; it waits until a case fires or {@link Running#stop}.
     *
     * @throws io.gosched.service.error.NotFoundException if a case's channel does not live here
     * @throws io.gosched.service.error.RefusedException when a send's value does not fit its channel's share or the budget
     */
    Running start(List<ChannelOutcome.SelectCase> cases);
}
