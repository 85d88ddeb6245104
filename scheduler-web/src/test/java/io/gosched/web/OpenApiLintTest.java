package io.gosched.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.deploy.Dashboard;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAPI document the whole service serves passes a real linter: Redocly CLI (pinned in
 * {@code tools/openapi-lint}) with its recommended rules, no errors. Among them: every operation
 * declares its security and has a summary, every reference resolves; raised to errors there: every
 * operation declares a 4xx answer and every 4xx answer is application/problem+json.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gosched.api.token=lint-token-0123456789")
class OpenApiLintTest {

    static final Path TOOLS = Dashboard.repoRoot().resolve("tools/openapi-lint");
    static final Path REDOCLY = TOOLS.resolve("node_modules/.bin/redocly");

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    @Test
    void theServedDocumentHasNoLintErrors() throws Exception {
        assumeTrue(Files.isExecutable(REDOCLY), "Redocly CLI missing at " + REDOCLY
                + ": run `npm ci --prefix tools/openapi-lint` (needs Node.js 20.19+; .ci/run does it) to run this test");
        String node = nodeVersion();
        assumeTrue(node != null && supported(node), "Node.js 20.19+ or 22.12+ needed on PATH for Redocly CLI, found "
                + (node == null ? "none" : node) + " (.ci/run checks it)");

        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/v3/api-docs")).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(doc.statusCode()).isEqualTo(200);
        Path file = dir.resolve("openapi.json");
        Files.writeString(file, doc.body());

        Path out = dir.resolve("lint.json");
        Process p = new ProcessBuilder(REDOCLY.toString(), "lint", file.toString(), "--config", TOOLS.resolve("redocly.yaml").toString(),
                "--format", "json", "--max-problems", "1000")
                .redirectOutput(out.toFile()).redirectError(dir.resolve("lint.err").toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("redocly finished").isTrue();
        String stdout = Files.readString(out);
        assertThat(stdout).as("redocly's report (stderr: %s)", Files.readString(dir.resolve("lint.err"))).startsWith("{");
        JsonNode report = JsonMapper.builder().build().readTree(stdout);
        List<String> errors = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        for (JsonNode problem : report.get("problems")) {
            String line = problem.get("ruleId").asString() + " at " + problem.path("location").path(0).path("pointer").asString()
                    + ": " + problem.get("message").asString();
            ("error".equals(problem.get("severity").asString()) ? errors : warnings).add(line);
        }
        System.out.println("redocly lint: " + report.get("totals") + (warnings.isEmpty() ? "" : "; warnings: " + warnings));
        assertThat(errors).as("redocly lint errors").isEmpty();
        assertThat(report.get("totals").get("errors").asInt()).isZero();
    }

    /** {@code node --version} (e.g. v20.20.2), or null without node. */
    private static String nodeVersion() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
        } catch (Exception e) {
            return null;
        }
    }

    /** Redocly CLI 2's engines: Node.js 20.19+ (not 21) or 22.12+. */
    static boolean supported(String version) {
        String[] v = version.replaceFirst("^v", "").split("\\.");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        return (major == 20 && minor >= 19) || (major == 22 && minor >= 12) || major > 22;
    }
}
