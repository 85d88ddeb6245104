package io.gosched.service.http;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

import tools.jackson.databind.JsonNode;

/**
 * One HTTP-target job's request, validated: what each attempt sends.
 *
 * @param method     GET, HEAD, POST, PUT, PATCH or DELETE
 * @param url        the target, normalized, under an allowed prefix
 * @param headers    the client's headers (never the ones the service sets itself), in order
 * @param body       a JSON value (sent as JSON), a JSON string (sent as text), or null for none
 * @param timeoutMs  how long one attempt's call may take, connection included
 */
public record HttpCall(String method, URI url, Map<String, String> headers, JsonNode body, long timeoutMs) {

    public HttpCall {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(url, "url");
        headers = Map.copyOf(headers);
    }
}
