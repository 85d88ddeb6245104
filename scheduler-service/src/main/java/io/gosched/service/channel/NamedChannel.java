package io.gosched.service.channel;

import java.time.Instant;

import io.gosched.runtime.Chan;
import io.gosched.service.budget.ByteShare;

/**
 * A named channel of this node and what the service remembers about it.
 *
 * @param share        its values' share of the memory budget
 * @param bufferBytes  what its slot array and the channel itself were charged when it was made
 */
public record NamedChannel(String name, int capacity, Instant createdAt, Chan<Object> chan, ByteShare share, long bufferBytes) {}
