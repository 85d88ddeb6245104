package io.gosched.service.channel.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * Where a named channel lives.
 *
 * @param name         the channel's name
 * @param node         the home node's id
 * @param incarnation  the home process's start id: a node restarted under the same id has lost
 *                     its channels, and an operation addressed to the old incarnation is lost
 * @param capacity     the channel's buffer size
 * @param createdAt    when it was made
 */
public record ChannelHome(String name, String node, String incarnation, int capacity, Instant createdAt) {

    public ChannelHome {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(incarnation, "incarnation");
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
