package io.gosched.service.error;

import java.util.List;

/**
 * A request that broke a rule or a limit: carries every violation found, each named by its JSON
 * pointer, not only the first, so that a client fixes them in one round trip.
 */
public final class InvalidRequestException extends ServiceException {

    private final List<Violation> violations;

    public InvalidRequestException(List<Violation> violations) {
        super(violations.isEmpty() ? "invalid request" : violations.getFirst().pointer() + ": " + violations.getFirst().detail());
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("an invalid request needs at least one violation");
        }
        this.violations = List.copyOf(violations);
    }

    /** One violation at {@code pointer}. */
    public InvalidRequestException(String pointer, String detail) {
        this(List.of(new Violation(pointer, detail)));
    }

    public List<Violation> violations() {
        return violations;
    }
}
