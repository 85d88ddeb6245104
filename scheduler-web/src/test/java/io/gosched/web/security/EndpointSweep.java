package io.gosched.web.security;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every operation of the served OpenAPI document, tried as an attacker would: without
 * credentials, with bad ones, through spellings of its path that decode or normalize to it, and
 * with HEAD and OPTIONS. The request list comes from {@code /v3/api-docs}, so an endpoint added
 * later is swept without a change here. Requests go out through {@link HttpClient} exactly as
 * written (no client-side normalization) to a real server.
 */
final class EndpointSweep {

    /** An operation of the document, its path variables filled in with a value that names nothing. */
    record Operation(String method, String template, String path, boolean body, List<String> query,
            List<List<String>> scopeAlternatives) {

        @Override
        public String toString() {
            return method + " " + template;
        }
    }

    /** One spelling of an operation's path; {@code firewall}: Spring's firewall must refuse it with 400. */
    record Variant(String label, String rawPath, boolean firewall) {}

    /** A credential to present: a label for messages and the Authorization header (null: none). */
    record Credential(String label, String authorization) {}

    /** Statuses that mean "refused or not found"; anything else let the request through. */
    static final Set<Integer> REFUSED = Set.of(400, 401, 403, 404, 405);

    private final String base;
    private final ControllerCalls calls;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final JsonMapper json = JsonMapper.builder().build();

    EndpointSweep(int port, ControllerCalls calls) {
        this.base = "http://127.0.0.1:" + port;
        this.calls = calls;
    }

    /** The operations of the served document (fetched without credentials: it is public). */
    List<Operation> operations() throws IOException, InterruptedException {
        Response r = send("GET", "/v3/api-docs", null, false, Duration.ofSeconds(60), Duration.ofSeconds(60)); // built on first request: slow on a busy machine
        if (r.status() != 200) {
            throw new AssertionError("GET /v3/api-docs answered " + r.status() + ": " + r.body());
        }
        JsonNode doc = json.readTree(r.body());
        calls.drain(); // the document's own controller
        List<Operation> ops = new ArrayList<>();
        for (var path : doc.get("paths").properties()) {
            for (var op : path.getValue().properties()) {
                List<String> query = new ArrayList<>();
                for (JsonNode p : op.getValue().path("parameters")) {
                    if ("query".equals(p.path("in").asString())) {
                        query.add(p.get("name").asString());
                    }
                }
                List<List<String>> alternatives = new ArrayList<>();
                for (JsonNode requirement : op.getValue().path("security")) {
                    for (var scheme : requirement.properties()) {
                        if (scheme.getKey().equals("oauth2")) {
                            List<String> scopes = new ArrayList<>();
                            scheme.getValue().forEach(s -> scopes.add(s.asString()));
                            alternatives.add(scopes);
                        }
                    }
                }
                String template = path.getKey();
                ops.add(new Operation(op.getKey().toUpperCase(Locale.ROOT), template, template.replaceAll("\\{[^}/]+}", "x0"),
                        op.getValue().has("requestBody"), query, alternatives));
            }
        }
        return ops;
    }

    /** The path as written, then spelled every way that must not lead anywhere else. */
    static List<Variant> variants(String path) {
        List<Variant> out = new ArrayList<>();
        String[] seg = path.substring(1).split("/");
        for (int i = 0; i < seg.length; i++) {
            String s = seg[i];
            // Percent-encoded first character: decodes to the same path, so the same rule must apply.
            out.add(new Variant("%-encoded letter in segment " + i, join(seg, i, "%" + hex(s.charAt(0)) + s.substring(1)), false));
            out.add(new Variant("; parameter on segment " + i, join(seg, i, s + ";a=1"), true));
            out.add(new Variant("%3B parameter on segment " + i, join(seg, i, s + "%3Ba=1"), true));
            out.add(new Variant("upper case segment " + i, join(seg, i, s.toUpperCase(Locale.ROOT)), false));
            if (i > 0) {
                out.add(new Variant("// before segment " + i, join(seg, i, "/" + s), true));
                out.add(new Variant("/./ before segment " + i, join(seg, i, "./" + s), true));
                out.add(new Variant("/x/../ before segment " + i, join(seg, i, "x/../" + s), true));
                out.add(new Variant("/%2e/ before segment " + i, join(seg, i, "%2e/" + s), true));
                out.add(new Variant("encoded / before segment " + i, joinEncoded(seg, i, "%2F"), true));
                out.add(new Variant("encoded \\ before segment " + i, joinEncoded(seg, i, "%5C"), true));
            }
            out.add(new Variant("double-encoded letter in segment " + i, join(seg, i, "%25" + hex(s.charAt(0)) + s.substring(1)), true));
        }
        out.add(new Variant("leading //", "/" + path, true));
        out.add(new Variant("trailing /", path + "/", false));
        out.add(new Variant("trailing /.", path + "/.", true));
        out.add(new Variant("trailing /..", path + "/..", true));
        out.add(new Variant("all upper case", path.toUpperCase(Locale.ROOT), false));
        return out;
    }

    /**
     * Every refusal an operation must give to {@code credential}: on its own path (exactly
     * {@code expectedStatus} with a problem of {@code expectedType}), on every variant (the
     * firewall's 400 where it applies, else a refusal or a 404), and, when {@code headAndOptions},
     * with HEAD and OPTIONS (pass it only for credentials no method of the path may accept: HEAD is
     * the path's GET, which another operation may allow). Returns what went wrong, one line each.
     */
    List<String> refusals(Operation op, Credential credential, int expectedStatus, String expectedType, boolean headAndOptions)
            throws IOException, InterruptedException {
        return refusals(op, credential, expectedStatus, expectedType, headAndOptions, true);
    }

    /** {@link #refusals(Operation, Credential, int, String, boolean)}, on the operation's own path only when not {@code variants}. */
    List<String> refusals(Operation op, Credential credential, int expectedStatus, String expectedType, boolean headAndOptions,
            boolean variants) throws IOException, InterruptedException {
        List<String> failures = new ArrayList<>();
        Response r = send(op.method(), op.path(), credential.authorization(), op.body());
        expect(failures, op + " " + credential.label(), r, Set.of(expectedStatus), false);
        if (r.status() == expectedStatus && !r.body().contains("\"type\":\"" + expectedType + "\"")) {
            failures.add(op + " " + credential.label() + ": expected type " + expectedType + ", got " + r);
        }
        if (headAndOptions) {
            for (String method : List.of("HEAD", "OPTIONS")) {
                Response m = send(method, op.path(), credential.authorization(), false);
                expect(failures, method + " " + op.template() + " " + credential.label(), m, REFUSED, method.equals("HEAD"));
            }
        }
        for (Variant v : variants ? variants(op.path()) : List.<Variant>of()) {
            Response vr = send(op.method(), v.rawPath(), credential.authorization(), op.body());
            expect(failures, op.method() + " " + v.rawPath() + " (" + v.label() + ", " + credential.label() + ")", vr,
                    v.firewall() ? Set.of(400) : REFUSED, false);
            if (v.firewall() && vr.status() == 400 && !vr.body().contains("urn:gosched:problem:rejected-request")) {
                failures.add(op.method() + " " + v.rawPath() + ": 400 but not the firewall's: " + vr);
            }
        }
        return failures;
    }

    /** One request with credentials that should be enough: it must reach a controller. Empty: it did. */
    List<String> reaches(Operation op, Credential credential) throws IOException, InterruptedException {
        StringBuilder path = new StringBuilder(op.path());
        // Values no parameter accepts: the controller answers at once with a 4xx (an SSE endpoint never
        // opens its stream, a trace never records), but only after the request reached it.
        for (int i = 0; i < op.query().size(); i++) {
            path.append(i == 0 ? '?' : '&').append(op.query().get(i)).append("=%21");
        }
        Response r = send(op.method(), path.toString(), credential.authorization(), op.body());
        List<ControllerCalls.Call> seen = calls.drain();
        List<String> failures = new ArrayList<>();
        if (r.status() == 401 || r.status() == 403 || seen.size() != 1) {
            failures.add(op + " with " + credential.label() + ": " + r + ", controller calls " + seen);
        }
        return failures;
    }

    private void expect(List<String> failures, String what, Response r, Set<Integer> allowed, boolean head) {
        List<ControllerCalls.Call> seen = calls.drain();
        if (!seen.isEmpty()) {
            failures.add(what + ": REACHED A CONTROLLER " + seen + " -> " + r);
        }
        if (!allowed.contains(r.status())) {
            failures.add(what + ": " + r + " (expected one of " + allowed + ")");
        }
        String type = r.headers().getOrDefault("content-type", "");
        if (!head && !type.startsWith("application/problem+json")) {
            failures.add(what + ": not a problem detail (" + type + ") " + r);
        }
        if ((r.status() == 401 || r.status() == 403) && !r.headers().getOrDefault("www-authenticate", "").startsWith("Bearer realm=\"gosched\"")) {
            failures.add(what + ": " + r.status() + " without the bearer challenge: " + r.headers());
        }
    }

    record Response(int status, Map<String, String> headers, String body) {

        /** For messages: the status line's worth, not a whole document. */
        @Override
        public String toString() {
            return status + " " + (body.length() > 300 ? body.substring(0, 300) + "..." : body);
        }
    }

    Response send(String method, String rawPath, String authorization, boolean body) throws IOException, InterruptedException {
        return send(method, rawPath, authorization, body, Duration.ofSeconds(20), Duration.ofSeconds(5));
    }

    /** {@code timeout} for the answer's headers, {@code bodyTimeout} for its body (a refusal's is short; a stream never ends). */
    Response send(String method, String rawPath, String authorization, boolean body, Duration timeout, Duration bodyTimeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + rawPath)).timeout(timeout)
                .method(method, body ? HttpRequest.BodyPublishers.ofString("{}") : HttpRequest.BodyPublishers.noBody());
        if (body) {
            b.header("Content-Type", "application/json");
        }
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<InputStream> r;
        try {
            r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (HttpTimeoutException e) {
            // A server that stops reading a kept-alive connection looks like this (reactor-netty#4361,
            // fixed by the Reactor Netty the build pins; KeepAliveTest holds it): the stacks of the
            // server's threads say where a new hang sits.
            throw new HttpTimeoutException("no answer in " + timeout.toSeconds() + " s to " + method + " " + rawPath
                    + (authorization == null ? " without credentials" : " with " + authorization.substring(0, Math.min(40, authorization.length())) + "...")
                    + "\n" + serverThreads());
        }
        Map<String, String> headers = new LinkedHashMap<>();
        r.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(", ", v)));
        return new Response(r.statusCode(), headers, readBounded(r.body(), bodyTimeout));
    }

    /**
     * The server runs in this JVM: when it does not answer, the stacks of Reactor's threads (event
     * loops and schedulers, shared by every server of the JVM, so one stuck in an earlier test hangs
     * this one) and of every thread in the service's code say where it hangs.
     */
    static String serverThreads() {
        StringBuilder sb = new StringBuilder("server threads:");
        Thread.getAllStackTraces().forEach((t, stack) -> {
            boolean ours = java.util.Arrays.stream(stack).anyMatch(f -> f.getClassName().startsWith("io.gosched"));
            String name = t.getName();
            boolean reactor = name.startsWith("reactor-") || name.startsWith("boundedElastic") || name.startsWith("parallel")
                    || name.startsWith("single");
            if (reactor || ours) {
                sb.append("\n\"").append(t.getName()).append("\" ").append(t.getState());
                for (int i = 0; i < Math.min(stack.length, 30); i++) {
                    sb.append("\n    at ").append(stack[i]);
                }
            }
        });
        return sb.toString();
    }

    /**
     * The body, read for at most {@code timeout}: a request that got through to a stream (SSE)
     * would otherwise never end. Such a body is marked, and the stream closed.
     */
    private static String readBounded(InputStream in, Duration timeout) throws InterruptedException {
        CompletableFuture<String> text = CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(body unreadable: " + e + ")";
            }
        });
        try {
            return text.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            try {
                in.close();
            } catch (IOException ignored) {
                // closing is all we can do
            }
            return "(body still streaming after " + timeout.toSeconds() + " s: a stream was opened)";
        } catch (ExecutionException e) {
            return "(body unreadable: " + e.getCause() + ")";
        }
    }

    private static String join(String[] seg, int at, String replacement) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < seg.length; i++) {
            sb.append('/').append(i == at ? replacement : seg[i]);
        }
        return sb.toString();
    }

    /** The path with the {@code /} before segment {@code at} spelled as {@code separator}. */
    private static String joinEncoded(String[] seg, int at, String separator) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < seg.length; i++) {
            sb.append(i == at ? separator : "/").append(seg[i]);
        }
        return sb.toString();
    }

    private static String hex(char c) {
        return String.format("%02X", (int) c);
    }
}
