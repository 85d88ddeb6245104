package io.gosched.service.job.spi;

import java.util.Objects;

/**
 * A value as a store holds it, with the revision a compare-and-set must name to replace it.
 * Revisions of one key only grow.
 */
public record Versioned<T>(T value, long revision) {

    public Versioned {
        Objects.requireNonNull(value, "value");
        if (revision < 1) {
            throw new IllegalArgumentException("revision must be at least 1: " + revision);
        }
    }
}
