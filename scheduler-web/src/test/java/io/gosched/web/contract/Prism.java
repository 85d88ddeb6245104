package io.gosched.web.contract;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.deploy.Dashboard;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Stoplight Prism (pinned in {@code tools/prism}) as a validating proxy: {@code prism proxy
 * <document> <service> --errors} forwards each call to the service and checks the request and the
 * answer against the OpenAPI document. A mismatch turns the answer into Prism's own problem: 422
 * for a request the document does not allow, 500 {@code ...#VIOLATIONS} for an answer it does not
 * describe (an undeclared status, a body of another shape); either way with an {@code sl-violations}
 * header naming what differed.
 */
final class Prism implements AutoCloseable {

    static final Path TOOLS = Dashboard.repoRoot().resolve("tools/prism");
    static final Path BIN = TOOLS.resolve("node_modules/.bin/prism");

    final URI base;
    private final Process process;
    private final Path log;

    private Prism(URI base, Process process, Path log) {
        this.base = base;
        this.process = process;
        this.log = log;
    }

    static void assumeInstalled() {
        assumeTrue(Files.isExecutable(BIN), "Prism missing at " + BIN
                + ": run `npm ci --prefix tools/prism` (Node.js 20+; .ci/run does it) to run the contract test");
    }

    /** Fetches the document {@code service} serves, then starts Prism in front of the service with it. */
    static Prism inFrontOf(URI service, Path dir) throws Exception {
        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/v3/api-docs"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        if (doc.statusCode() != 200) {
            throw new IllegalStateException("GET /v3/api-docs answered " + doc.statusCode());
        }
        Path file = dir.resolve("openapi.json");
        Files.writeString(file, doc.body());
        return start(file, service, dir);
    }

    static Prism start(Path document, URI service, Path dir) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path log = dir.resolve("prism-" + port + ".log");
        Process p = new ProcessBuilder(BIN.toString(), "proxy", document.toString(), service.toString().replaceAll("/$", ""),
                "--errors", "--host", "127.0.0.1", "--port", Integer.toString(port))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Prism prism = new Prism(URI.create("http://127.0.0.1:" + port), p, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Socket ignored = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return prism;
            } catch (IOException notYet) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    prism.close();
                    throw new IllegalStateException("Prism did not start listening on " + port + ": " + prism.log());
                }
                Thread.sleep(200);
            }
        }
    }

    String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
