package io.gosched.service.channel;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.gosched.service.channel.spi.ChannelDirectory;
import io.gosched.service.channel.spi.ChannelForwarder;
import io.gosched.service.channel.spi.ChannelHome;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalChannels;
import io.gosched.service.error.NotFoundException;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The channel directory and forwarder of a node that is the only one: every channel is in its
 * own {@link ChannelRegistry}, none is anywhere else, so nothing is recorded, nothing is ever
 * forwarded, and views name no node. The default beans of the embedded mode; a cluster
 * contributes its own.
 */
public final class SoleNodeChannels implements ChannelDirectory, ChannelForwarder {

    /** What this node's channels are recorded as, were anyone to ask: one node, one life. */
    private static final String NODE = "local";
    private static final String INCARNATION = "sole";

    @Override
    public String localNode() {
        return NODE;
    }

    @Override
    public String localIncarnation() {
        return INCARNATION;
    }

    /** Nobody else to tell: the registry's map is the record (its own conflict check makes names unique). */
    @Override
    public ChannelHome register(String name, int capacity, Instant createdAt) {
        return new ChannelHome(name, NODE, INCARNATION, capacity, createdAt);
    }

    @Override
    public boolean unregister(String name) {
        return true;
    }

    /** No channel lives anywhere else. */
    @Override
    public Optional<ChannelHome> home(String name) {
        return Optional.empty();
    }

    @Override
    public List<ChannelHome> list() {
        return List.of();
    }

    @Override
    public boolean isAlive(ChannelHome home) {
        return true;
    }

    @Override
    public void checkReachable() {
        // nothing to reach
    }

    @Override
    public boolean isShared() {
        return false;
    }

    // ---------------------------------------------------------------- never asked: no channel lives elsewhere

    @Override
    public Mono<ChannelOutcome.Send> send(ChannelHome home, JsonNode value, Duration timeout) {
        return Mono.error(new NotFoundException("channel", home.name()));
    }

    @Override
    public Mono<ChannelOutcome.Recv> recv(ChannelHome home, Duration timeout) {
        return Mono.error(new NotFoundException("channel", home.name()));
    }

    @Override
    public Mono<ChannelOutcome.Select> select(ChannelHome home, List<ChannelOutcome.SelectCase> cases, Duration timeout) {
        return Mono.error(new NotFoundException("channel", home.name()));
    }

    @Override
    public Mono<Void> close(ChannelHome home) {
        return Mono.error(new NotFoundException("channel", home.name()));
    }

    @Override
    public Mono<Optional<ChannelOutcome.State>> describe(ChannelHome home) {
        return Mono.just(Optional.empty());
    }

    @Override
    public Mono<Void> delete(ChannelHome home) {
        return Mono.error(new NotFoundException("channel", home.name()));
    }

    @Override
    public Mono<List<ChannelOutcome.State>> states(String node, String incarnation) {
        return Mono.just(List.of());
    }

    /** No other node asks. */
    @Override
    public void serve(LocalChannels local) {
        // nothing to serve
    }
}
