package io.gosched.service.error;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Why the service did not do what it was asked: the one exception family of its domain. Each
 * member is one kind of answer a caller can act on (look elsewhere, try again later, fix the
 * request); the HTTP layer maps each to its RFC 9457 problem in one place, and nothing below
 * it knows about problems or status codes.
 *
 * <p>{@link #members()} are the facts a client may read besides the message, in the order they
 * were added (the job or channel concerned, the bounds that refused, the state found).
 */
public abstract sealed class ServiceException extends RuntimeException
        permits NotFoundException, ConflictException, GoneException, RefusedException, ShuttingDownException, BackendException,
        InvalidRequestException {

    private final Map<String, Object> members = new LinkedHashMap<>();

    ServiceException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The same exception without a stack trace: for answers expected in normal operation, thrown often. */
    ServiceException(String message) {
        super(message, null, false, false);
    }

    /** Adds a fact the client may read, e.g. {@code with("jobId", id)}; null values are kept. */
    public ServiceException with(String name, Object value) {
        members.put(name, value);
        return this;
    }

    /** The facts added by {@link #with}, in order. */
    public Map<String, Object> members() {
        return Collections.unmodifiableMap(members);
    }
}
