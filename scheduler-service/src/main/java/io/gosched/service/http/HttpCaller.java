package io.gosched.service.http;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.context.Context;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Select;
import io.gosched.runtime.Selected;
import io.gosched.time.Time;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Makes an HTTP-target job's call from its goroutine, and says how it ended ({@link HttpOutcome}).
 *
 * <p><b>Where the call waits.</b> The goroutine waits in a {@code select} on the answer's channel,
 * its context's {@code done()} and the call's timer, parked like any goroutine on a channel: it
 * holds no M and no P while the target thinks, so thousands of slow calls cost a few platform
 * threads. Departure from Go: Go's {@code net/http} does its I/O on the goroutine itself through
 * the netpoller; here the JDK's {@link HttpClient} does it (one selector thread and
 * {@code client-threads} completion threads, TLS and HTTP/2 included), and its completion sends
 * the answer to the goroutine's channel, which readies the goroutine as a netpoll wake-up would.
 *
 * <p><b>What every attempt sends.</b> The job's method, URL, headers and body, plus
 * {@code Idempotency-Key: <job id>} (the same on every attempt, so a target can drop the
 * duplicates of at-least-once delivery) and {@code Gosched-Attempt: <n>}.
 *
 * <p><b>Outcomes.</b> 2xx succeeds. 5xx, 429, connect errors and timeouts fail retryably (429 and
 * 503 with {@code Retry-After} say from when). Other 4xx, an oversized body, and a redirect out of
 * the allowed targets fail for good. Redirects within them are followed as Go's client does
 * (301, 302, 303 as GET; 307, 308 with the same method and body), at most {@code max-redirects}.
 *
 * <p>Thread-safe. {@link #call} runs in a goroutine.
 */
public final class HttpCaller implements AutoCloseable {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpJobProperties properties;
    private final HttpTargets targets;
    private final ExecutorService executor;
    private final HttpClient client;
    private final MeterRegistry meters;

    /** @param meters  where the per-target meters go, or null for none */
    public HttpCaller(HttpJobProperties properties, HttpTargets targets, MeterRegistry meters) {
        this.properties = properties;
        this.targets = targets;
        this.meters = meters;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(properties.clientThreads(), r -> {
            Thread t = new Thread(r, "gosched-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.client = HttpClient.newBuilder()
                .executor(executor)
                .followRedirects(HttpClient.Redirect.NEVER) // followed here, each hop checked against the allowed targets
                .connectTimeout(Duration.ofMillis(properties.connectTimeoutMs()))
                // HTTP/1.1: no h2c upgrade dance with plain-http targets; one connection per call in flight
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    public HttpTargets targets() {
        return targets;
    }

    /**
     * Makes {@code call} as attempt {@code attempt} of job {@code jobId}; returns when it ended, the
     * call's timeout passed or {@code ctx} ended. Must run in a goroutine.
     *
     * @param maxBodyBytes  the job's own bound on the response body (its share of the memory
     *                      budget); the smaller of it and {@code max-response-bytes} applies
     */
    public HttpOutcome call(HttpCall call, String jobId, int attempt, Context ctx, long maxBodyBytes) {
        long limit = Math.max(0, Math.min(maxBodyBytes, properties.maxResponseBytes()));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(call.timeoutMs());
        URI url = call.url();
        String method = call.method();
        JsonNode body = call.body();
        for (int hop = 0; ; hop++) {
            UrlPrefix prefix = targets.prefixOf(url);
            if (prefix == null) { // the allowed targets changed under a stored job: refuse, never call
                return new HttpOutcome.Failed(url + " " + targets.refusal(url).orElse("is not allowed"), 0, false, null, null);
            }
            String tag = prefix.text();
            TargetLimits limits = targets.limitsOf(url);
            if (!limits.acquire(ctx)) {
                return new HttpOutcome.Cancelled(ctx.err());
            }
            long started = System.nanoTime();
            Exchange x;
            try {
                x = exchange(request(method, url, call.headers(), body, jobId, attempt, deadline), ctx, deadline, limit);
            } finally {
                limits.release();
            }
            record(tag, x, System.nanoTime() - started);
            if (x.cancelled()) {
                return new HttpOutcome.Cancelled(ctx.err());
            }
            if (x.failure() != null) {
                return failure(call, x.failure(), limit);
            }
            HttpResponse<byte[]> r = x.response();
            int status = r.statusCode();
            if (isRedirect(status) && r.headers().firstValue("location").isPresent()) {
                URI next;
                try {
                    next = url.resolve(r.headers().firstValue("location").get()).normalize();
                } catch (IllegalArgumentException e) {
                    return new HttpOutcome.Failed("the target answered " + status + " with an unusable Location", status, false, null,
                            result(r));
                }
                var refused = targets.refusal(next);
                if (refused.isPresent()) {
                    return new HttpOutcome.Failed("the target answered " + status + ", a redirect to " + next + " that was not followed: it "
                            + refused.get(), status, false, null, result(r));
                }
                if (hop + 1 > properties.maxRedirects()) {
                    return new HttpOutcome.Failed("stopped after " + properties.maxRedirects() + " redirects (gosched.jobs.http.max-redirects)",
                            status, false, null, result(r));
                }
                if (status == 301 || status == 302 || status == 303) {
                    method = "HEAD".equals(method) ? "HEAD" : "GET";
                    body = null;
                }
                url = next;
                continue;
            }
            JsonNode result = result(r);
            if (status >= 200 && status < 300) {
                return new HttpOutcome.Succeeded(result);
            }
            String error = "the target " + method + " " + url + " answered " + status;
            if (status == 429 || status == 503) {
                Instant after = retryAfter(r.headers().firstValue("retry-after").orElse(null), Time.now());
                return new HttpOutcome.Failed(error + (after != null ? " (Retry-After " + after + ")" : ""), status, true, after, result);
            }
            return new HttpOutcome.Failed(error, status, status >= 500, null, result);
        }
    }

    /** One request's end: the answer, or why none came, or the context's end. */
    record Exchange(HttpResponse<byte[]> response, Throwable failure, boolean cancelled) {}

    /** Sends and waits, parked: the answer's channel, the context, the deadline, whichever comes first. */
    private Exchange exchange(HttpRequest request, Context ctx, long deadline, long limit) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return new Exchange(null, new HttpTimeoutException("request timed out"), false);
        }
        Chan<Object> answer = Chan.make(1);
        CompletableFuture<HttpResponse<byte[]>> f = client.sendAsync(request, new BoundedBody(limit));
        // Completes on the client's thread; a buffer of one means the send never blocks it.
        f.whenComplete((r, e) -> answer.trySend(r != null ? r : unwrap(e)));
        Selected s = Select.select("IO wait", // what a goroutine in Go's net/http shows while it waits for the answer
                Select.recv(answer), Select.recv(ctx.done()),
                Select.recv(Time.after(Duration.ofNanos(left))));
        switch (s.index()) {
            case 0 -> {
                Object v = s.value();
                if (v instanceof HttpResponse<?> r) {
                    @SuppressWarnings("unchecked")
                    HttpResponse<byte[]> resp = (HttpResponse<byte[]>) r;
                    return new Exchange(resp, null, false);
                }
                return new Exchange(null, (Throwable) v, false);
            }
            case 1 -> {
                f.cancel(true); // aborts the exchange and closes its connection
                return new Exchange(null, null, true);
            }
            default -> {
                f.cancel(true);
                return new Exchange(null, new HttpTimeoutException("request timed out"), false);
            }
        }
    }

    private HttpRequest request(String method, URI url, Map<String, String> headers, JsonNode body, String jobId, int attempt,
            long deadline) {
        HttpRequest.Builder b = HttpRequest.newBuilder(url)
                .timeout(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        boolean contentType = false;
        for (Map.Entry<String, String> h : headers.entrySet()) {
            b.header(h.getKey(), h.getValue());
            contentType |= h.getKey().equalsIgnoreCase("content-type");
        }
        b.setHeader(HttpCallParser.IDEMPOTENCY_KEY, jobId);
        b.setHeader(HttpCallParser.ATTEMPT, Integer.toString(attempt));
        HttpRequest.BodyPublisher publisher = HttpRequest.BodyPublishers.noBody();
        if (body != null) {
            if (body.isString()) {
                publisher = HttpRequest.BodyPublishers.ofString(body.stringValue(), StandardCharsets.UTF_8);
                if (!contentType) {
                    b.header("Content-Type", "text/plain; charset=utf-8");
                }
            } else {
                publisher = HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body));
                if (!contentType) {
                    b.header("Content-Type", "application/json");
                }
            }
        }
        return b.method(method, publisher).build();
    }

    private static HttpOutcome failure(HttpCall call, Throwable t, long limit) {
        if (t instanceof BoundedBody.TooLargeException) {
            return new HttpOutcome.Failed("the target " + call.method() + " " + call.url() + " answered with a body larger than " + limit
                    + " bytes, the most a job keeps (gosched.jobs.http.max-response-bytes and the job's memory share)", 0, false, null, null);
        }
        if (t instanceof HttpConnectTimeoutException) {
            return new HttpOutcome.Failed("could not connect to " + call.url() + ": connect timed out", 0, true, null, null);
        }
        if (t instanceof HttpTimeoutException) {
            return new HttpOutcome.Failed("the call to " + call.url() + " timed out after " + call.timeoutMs() + " ms", 0, true, null, null);
        }
        if (t instanceof ConnectException) {
            return new HttpOutcome.Failed("could not connect to " + call.url() + ": " + message(t), 0, true, null, null);
        }
        if (t instanceof IOException) {
            return new HttpOutcome.Failed("the call to " + call.url() + " failed: " + message(t), 0, true, null, null);
        }
        return new HttpOutcome.Failed("the call to " + call.url() + " failed: " + message(t), 0, false, null, null);
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }

    private static Throwable unwrap(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        // the client wraps a body subscriber's failure in an IOException: the cause says what it was
        if (e instanceof IOException && e.getCause() instanceof BoundedBody.TooLargeException tooLarge) {
            return tooLarge;
        }
        return e;
    }

    private static boolean isRedirect(int status) {
        return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
    }

    /** {@code {"status", "headers", "body"}}: header names in lower case, repeated ones joined by ", "; a JSON body as JSON, else text. */
    static JsonNode result(HttpResponse<byte[]> r) {
        ObjectNode out = JSON.createObjectNode();
        out.put("status", r.statusCode());
        ObjectNode headers = out.putObject("headers");
        Map<String, List<String>> sorted = new TreeMap<>();
        r.headers().map().forEach((k, v) -> {
            if (!k.startsWith(":")) { // HTTP/2 pseudo-headers are not headers
                sorted.put(k.toLowerCase(Locale.ROOT), v);
            }
        });
        sorted.forEach((k, v) -> headers.put(k, String.join(", ", v)));
        byte[] bytes = r.body();
        if (bytes == null || bytes.length == 0) {
            out.putNull("body");
            return out;
        }
        String type = r.headers().firstValue("content-type").orElse("").toLowerCase(Locale.ROOT);
        String media = type.split(";", 2)[0].strip();
        if (media.equals("application/json") || media.endsWith("+json")) {
            try {
                out.set("body", JSON.readTree(bytes));
                return out;
            } catch (JacksonException e) {
                // not the JSON it said it was: keep it as text
            }
        }
        out.put("body", new String(bytes, charset(type)));
        return out;
    }

    private static Charset charset(String contentType) {
        for (String part : contentType.split(";")) {
            String p = part.strip();
            if (p.startsWith("charset=")) {
                try {
                    return Charset.forName(p.substring(8).replace("\"", ""));
                } catch (RuntimeException e) {
                    break;
                }
            }
        }
        return StandardCharsets.UTF_8;
    }

    /** {@code Retry-After} as an instant: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); null when absent or unreadable. */
    static Instant retryAfter(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        if (v.chars().allMatch(Character::isDigit)) {
            try {
                return now.plusSeconds(Long.parseLong(v));
            } catch (NumberFormatException | ArithmeticException e) {
                return null;
            }
        }
        try {
            return ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /**
     * The meters of one call (one request: each redirect hop is one), tagged with the allowed
     * prefix the URL matched, never the URL itself, so that {@code target} has one value per
     * configured prefix: {@code gosched_http_target_requests_total{target,outcome}} and the
     * latency histogram {@code gosched_http_target_duration_seconds{target}}.
     */
    private void record(String target, Exchange x, long nanos) {
        if (meters == null) {
            return;
        }
        Counter.builder("gosched.http.target.requests").description("Calls of HTTP-target jobs by target prefix and outcome (status class)")
                .tag("target", target).tag("outcome", outcome(x)).register(meters).increment();
        // The histogram is the meter's own (no property needed): the dashboard's latency by target reads its buckets.
        Timer.builder("gosched.http.target.duration").description("Time from sending a call of an HTTP-target job to its answer")
                .tag("target", target).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(meters).record(Duration.ofNanos(nanos));
    }

    /**
     * A call's {@code outcome} tag, from a fixed vocabulary: the answer's status class
     * ({@code 1xx} to {@code 5xx}), or why no answer came: {@code timeout} (the call's timeout),
     * {@code connect_error} (refused, or the connect timed out), {@code cancelled} (the job's context
     * ended first), {@code error} (anything else, and a status outside 100 to 599).
     */
    static String outcome(Exchange x) {
        if (x.cancelled()) {
            return "cancelled";
        }
        if (x.failure() instanceof HttpConnectTimeoutException || x.failure() instanceof ConnectException) {
            return "connect_error";
        }
        if (x.failure() instanceof HttpTimeoutException) {
            return "timeout";
        }
        if (x.failure() != null) {
            return "error";
        }
        return statusClass(x.response().statusCode());
    }

    /** {@code 1xx} to {@code 5xx}; {@code error} for a status outside 100 to 599. */
    static String statusClass(int status) {
        return status >= 100 && status < 600 ? (status / 100) + "xx" : "error";
    }

    @Override
    public void close() {
        client.shutdownNow();
        executor.shutdownNow();
    }
}
