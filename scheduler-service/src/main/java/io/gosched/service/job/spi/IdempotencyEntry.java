package io.gosched.service.job.spi;

import java.util.Objects;

/**
 * What an Idempotency-Key stands for: the job it created and the hash of the body it came with,
 * so a replay with the same body answers that job and one with another body gets 409.
 */
public record IdempotencyEntry(String jobId, String bodyHash) {

    public IdempotencyEntry {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(bodyHash, "bodyHash");
    }
}
