package io.gosched.api.security;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * At most one fetch of the identity provider's JWK set (and discovery document) per interval;
 * within it, the last answer is served again.
 *
 * <p>Why: Spring's reactive JWK source fetches the set again for every token whose key id it
 * does not hold, so a client that invents key ids makes each of its requests a call to the
 * identity provider, and each such answer completes on the HTTP client's threads. Nimbus's own
 * {@code RateLimitedJWKSetSource} bounds this on the blocking path (30 s by default); the reactive
 * path has no such bound. With this filter a token with an unknown key id is checked against the
 * set fetched at most {@code interval} ago and refused at once. The price, as with Nimbus: a key
 * the provider publishes is accepted at most {@code interval} after its first token arrived.
 */
final class JwkSetFetchLimit implements ExchangeFilterFunction {

    /** One answer of the provider, kept to be served again. */
    private record Fetched(Instant at, HttpStatusCode status, HttpHeaders headers, String body) {}

    private final Duration interval;
    private final Clock clock;
    private final Map<URI, Fetched> last = new ConcurrentHashMap<>(); // a handful of URLs: the set, the discovery document

    JwkSetFetchLimit(Duration interval, Clock clock) {
        this.interval = interval;
        this.clock = clock;
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        if (!HttpMethod.GET.equals(request.method())) {
            return next.exchange(request);
        }
        Fetched recent = last.get(request.url());
        if (recent != null && Duration.between(recent.at(), clock.instant()).compareTo(interval) < 0) {
            return Mono.just(response(recent));
        }
        return next.exchange(request).flatMap(r -> r.bodyToMono(String.class).defaultIfEmpty("").map(body -> {
            Fetched fetched = new Fetched(clock.instant(), r.statusCode(), HttpHeaders.readOnlyHttpHeaders(r.headers().asHttpHeaders()), body);
            if (r.statusCode().is2xxSuccessful()) {
                last.put(request.url(), fetched);
            }
            return response(fetched);
        }));
    }

    private static ClientResponse response(Fetched f) {
        return ClientResponse.create(f.status()).headers(h -> h.addAll(f.headers())).body(f.body()).build();
    }
}
