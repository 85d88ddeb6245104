package io.gosched.service.http;

import java.time.Instant;

import tools.jackson.databind.JsonNode;

/**
 * How one attempt's call ended, as the job engine needs it: whether the job succeeded, and if not,
 * whether its retry policy may try again and from when.
 */
public sealed interface HttpOutcome {

    /** A 2xx answer: {@code result} is {@code {"status", "headers", "body"}}. */
    record Succeeded(JsonNode result) implements HttpOutcome {}

    /**
     * The call did not succeed.
     *
     * @param error      what happened, for the job's error; names the target's status or the cause
     * @param status     the answer's status, or 0 when none came (connect error, timeout)
     * @param retryable  5xx, 429, connect errors and timeouts: the retry policy may try again;
     *                   other 4xx, redirects out of the allowed targets and oversized bodies: it may not
     * @param notBefore  the target's {@code Retry-After} (on 429 and 503) as an instant, or null: the
     *                   next attempt starts no earlier
     * @param result     {@code {"status", "headers", "body"}} of the answer, or null when none came
     */
    record Failed(String error, int status, boolean retryable, Instant notBefore, JsonNode result) implements HttpOutcome {}

    /** The job's context ended (cancelled, or its deadline) while the call was waiting or in flight. */
    record Cancelled(Throwable cause) implements HttpOutcome {}
}
