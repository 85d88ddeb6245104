package io.gosched.api.workload;

import java.util.List;

/**
 * A request body that parsed as JSON but broke a rule of the DSL or a limit. Carries every
 * violation found, not only the first, so a client fixes them in one round trip.
 * Rendered as a 422 problem detail with an {@code errors} array.
 */
public final class InvalidWorkloadException extends RuntimeException {

    private final List<Violation> violations;

    public InvalidWorkloadException(List<Violation> violations) {
        super(violations.isEmpty() ? "invalid request" : violations.getFirst().pointer() + ": " + violations.getFirst().detail(),
                null, false, false);
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("an invalid request needs at least one violation");
        }
        this.violations = List.copyOf(violations);
    }

    public List<Violation> violations() {
        return violations;
    }
}
