package io.gosched.api.error;

import java.util.List;
import java.util.Set;

import io.gosched.service.error.Violation;

import org.springframework.web.server.ServerWebExchange;

/**
 * The query parameters a list operation reads, and nothing else: a name it does not know
 * ({@code GET /jobs?name=x} before name was a filter, a typo such as {@code stat=}) is refused
 * with 422 naming the parameter and the allowed ones, instead of being ignored while the whole
 * list comes back as if it had been applied.
 */
public final class QueryParameters {

    private QueryParameters() {
    }

    /** @throws ApiProblem 422 invalid-request for the first parameter of the request not in {@code allowed} */
    public static void only(ServerWebExchange exchange, List<String> allowed) {
        Set<String> sent = exchange.getRequest().getQueryParams().keySet();
        if (sent.isEmpty()) {
            return;
        }
        for (String name : sent) {
            if (!allowed.contains(name)) {
                String shown = name.length() > 64 ? name.substring(0, 64) + "..." : name;
                throw ApiProblem.invalid("/" + Violation.escape(shown), "is not a parameter of this operation: "
                        + (allowed.isEmpty() ? "it takes none" : "it reads " + String.join(", ", allowed)))
                        .with("parameter", shown).with("allowed", allowed);
            }
        }
    }
}
