package io.gosched.web.deploy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A real Prometheus (Debian's {@code /usr/bin/prometheus}) on a free loopback port, scraping every
 * second with the scrape jobs given, its data and log in a test's directory; stopped by close().
 */
public final class LocalPrometheus implements AutoCloseable {

    public static final Path BINARY = Path.of("/usr/bin/prometheus");
    public static final String MISSING = "/usr/bin/prometheus missing: install Debian package 'prometheus' (CI does) to run this test";

    private final Process process;
    private final Path dir;
    private final String base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final JsonMapper json = JsonMapper.builder().build();

    private LocalPrometheus(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.base = "http://127.0.0.1:" + port;
    }

    /** Starts it with {@code scrapeConfigs}: the YAML list under {@code scrape_configs:}, indented by two. */
    public static LocalPrometheus start(Path dir, String scrapeConfigs) throws IOException {
        return startWithConfig(dir, """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                scrape_configs:
                """ + scrapeConfigs);
    }

    /** Starts it with a whole configuration file's text. */
    public static LocalPrometheus startWithConfig(Path dir, String configText) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, configText);
        Process p = new ProcessBuilder(BINARY.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        return new LocalPrometheus(p, dir, port);
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** An instant query through the HTTP API; IOException while Prometheus is still starting. */
    public JsonNode query(String promql) throws IOException, InterruptedException {
        URI uri = URI.create(base + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() == 503) {
            // Prometheus answers plain-text "Service Unavailable" until its TSDB is open.
            throw new IOException("prometheus not ready: " + resp.body().strip());
        }
        return json.readTree(resp.body());
    }

    /** The first value a query returns, or -1 while there is none (or Prometheus is still starting). */
    public double value(String promql) throws InterruptedException {
        try {
            JsonNode result = query(promql).path("data").path("result");
            return result.isEmpty() ? -1 : Double.parseDouble(result.get(0).get("value").get(1).asString());
        } catch (IOException | RuntimeException notYet) {
            return -1;
        }
    }

    public String log() {
        try {
            return Files.readString(dir.resolve("prometheus.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
