package io.gosched.service.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server on a free loopback port, the target of HTTP jobs in tests: each request runs
 * on a virtual thread (so a slow endpoint costs the test no platform thread) and is recorded with
 * its headers and body. Closed by the test.
 */
public final class TargetServer implements AutoCloseable {

    /** A request as the server saw it. */
    public record Seen(String method, String path, Map<String, List<String>> headers, String body, long atNanos) {
        public String header(String name) {
            for (var e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().getFirst();
                }
            }
            return null;
        }
    }

    public final ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    public final AtomicInteger inFlight = new AtomicInteger();
    public final AtomicInteger maxInFlight = new AtomicInteger();
    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

    public TargetServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4096);
        server.setExecutor(executor);
        server.start();
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Answers {@code path} with {@code handler}, recording every request first. */
    public TargetServer on(String path, Handler handler) {
        server.createContext(path, exchange -> {
            int now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            try (exchange) {
                String body;
                try (InputStream in = exchange.getRequestBody()) {
                    body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                seen.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                        Map.copyOf(exchange.getRequestHeaders()), body, System.nanoTime()));
                handler.handle(exchange, body);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                inFlight.decrementAndGet();
            }
        });
        return this;
    }

    @FunctionalInterface
    public interface Handler {
        void handle(HttpExchange exchange, String body) throws IOException, InterruptedException;
    }

    public static void answer(HttpExchange x, int status, String contentType, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        if (contentType != null) {
            x.getResponseHeaders().set("Content-Type", contentType);
        }
        x.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
        if (b.length > 0) {
            try (OutputStream out = x.getResponseBody()) {
                out.write(b);
            }
        }
    }

    public long count(String path) {
        return seen.stream().filter(s -> s.path().equals(path)).count();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

}
