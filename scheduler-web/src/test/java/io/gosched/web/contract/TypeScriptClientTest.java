package io.gosched.web.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.deploy.Dashboard;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A TypeScript client made from the document the running service serves, as a TypeScript team
 * would make one: openapi-typescript's types ({@code tools/ts-client/generated/api.d.ts}) and
 * openapi-fetch, with the README's job and channel flows ({@code tools/ts-client/flows.ts}) type-checked
 * against those types by tsc and run under Node, with the token the service requires.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gosched.api.token=" + TypeScriptClientTest.TOKEN)
class TypeScriptClientTest {

    static final String TOKEN = "ts-client-token-0123456789";
    static final Path TOOLS = Dashboard.repoRoot().resolve("tools/ts-client");

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    @Test
    void aClientGeneratedFromTheServedDocumentTypeChecksAndRunsTheReadmeFlows() throws Exception {
        Path bin = TOOLS.resolve("node_modules/.bin");
        assumeTrue(Files.isExecutable(bin.resolve("openapi-typescript")) && Files.isExecutable(bin.resolve("tsc")),
                "openapi-typescript and tsc missing under " + bin + ": run `npm ci --prefix tools/ts-client` (Node.js 20+; .ci/run does it)");
        URI service = URI.create("http://127.0.0.1:" + port);
        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/v3/api-docs")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(doc.statusCode()).isEqualTo(200);
        Path document = dir.resolve("openapi.json");
        Files.writeString(document, doc.body());

        run(List.of(bin.resolve("openapi-typescript").toString(), document.toString(), "-o", "generated/api.d.ts"), "openapi-typescript");
        run(List.of(bin.resolve("tsc").toString(), "-p", "."), "tsc (the flows against the generated types)");
        String out = run(List.of("node", "dist/flows.js", service.toString(), TOKEN), "the flows under Node");
        System.out.println("TypeScript client: " + out.strip());
        assertThat(out).contains("round trip null").contains("round trip [true,1.5]").contains("channel closed, drained and deleted");
    }

    private String run(List<String> command, String what) throws Exception {
        Path log = dir.resolve("out-" + System.nanoTime() + ".log");
        Process p = new ProcessBuilder(command).directory(TOOLS.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(what + " did not finish in 180 s: " + Files.readString(log));
        }
        String out = Files.readString(log);
        assertThat(p.exitValue()).as("%s exit code; its output: %s", what, out).isZero();
        return out;
    }
}
