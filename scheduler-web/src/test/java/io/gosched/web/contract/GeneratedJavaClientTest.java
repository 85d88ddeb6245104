package io.gosched.web.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gosched.web.deploy.Dashboard;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A Java client generated from the document the running service serves, as a Java team would make
 * one: OpenAPI Generator 7 ({@code java} generator, {@code native} library, no options, no name
 * mappings), compiled, and run through the README's job and channel flows
 * ({@code openapi-clients/JavaClientFlows.java}: two jobs, a channel carrying a number, a string, an
 * object, an array and null, its close and delete, GOMAXPROCS). The client runs in a class loader of
 * its own with its own Jackson 2, as it would in a user's application.
 *
 * <p>The generator's CLI and the client's libraries are copied under
 * {@code target/openapi-clients} by the build (maven-dependency-plugin, generate-test-resources).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GeneratedJavaClientTest {

    static final Path CLIENTS = Dashboard.repoRoot().resolve("scheduler-web/target/openapi-clients");
    static final Path GENERATOR = CLIENTS.resolve("generator/openapi-generator-cli.jar");

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    @Test
    void aClientGeneratedFromTheServedDocumentCompilesAndRunsTheReadmeFlows() throws Exception {
        assumeTrue(Files.isRegularFile(GENERATOR), GENERATOR + " missing: the Maven build copies it (generate-test-resources)");
        URI service = URI.create("http://127.0.0.1:" + port);
        HttpResponse<String> doc = HttpClient.newHttpClient().send(HttpRequest.newBuilder(service.resolve("/v3/api-docs")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(doc.statusCode()).isEqualTo(200);
        Path document = dir.resolve("openapi.json");
        Files.writeString(document, doc.body());

        Path generated = dir.resolve("client");
        Path log = dir.resolve("generator.log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-jar", GENERATOR.toString(), "generate", "-i", document.toString(), "-g", "java",
                "--library", "native", "-o", generated.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(180, TimeUnit.SECONDS)).as("the generator finished").isTrue();
        assertThat(p.exitValue()).as("the generator's exit code; its log: %s", Files.readString(log)).isZero();

        List<Path> libs;
        try (Stream<Path> s = Files.list(CLIENTS.resolve("java-libs"))) {
            libs = s.filter(f -> f.toString().endsWith(".jar")).sorted().toList();
        }
        List<Path> sources = new ArrayList<>();
        try (Stream<Path> s = Files.walk(generated.resolve("src/main/java"))) {
            s.filter(f -> f.toString().endsWith(".java")).forEach(sources::add);
        }
        Path flows = dir.resolve("flows/JavaClientFlows.java");
        Files.createDirectories(flows.getParent());
        try (var in = getClass().getResourceAsStream("/openapi-clients/JavaClientFlows.java")) {
            Files.write(flows, in.readAllBytes());
        }
        sources.add(flows);
        Path classes = dir.resolve("classes");
        Files.createDirectories(classes);
        compile(sources, libs, classes);

        List<URL> urls = new ArrayList<>();
        urls.add(classes.toUri().toURL());
        for (Path lib : libs) {
            urls.add(lib.toUri().toURL());
        }
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            Object done;
            try {
                done = loader.loadClass("JavaClientFlows").getMethod("run", String.class, String.class)
                        .invoke(null, service.toString(), null);
            } catch (InvocationTargetException e) {
                throw new AssertionError("the README flows failed in the generated client: " + e.getCause(), e.getCause());
            }
            System.out.println("generated Java client: " + done);
            assertThat(done.toString()).as("flows done").contains("channel round trip of null")
                    .contains("channel round trip of [true, 1.5]").contains("channel closed, drained and deleted");
        }
    }

    static void compile(List<Path> sources, List<Path> classpath, Path out) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter diagnostics = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
            List<String> options = List.of("-d", out.toString(), "-proc:none", "-nowarn", "-encoding", "UTF-8",
                    "-cp", String.join(java.io.File.pathSeparator, classpath.stream().map(Path::toString).toList()));
            boolean ok = javac.getTask(diagnostics, files, null, options, null, files.getJavaFileObjectsFromPaths(sources)).call();
            assertThat(ok).as("the generated client and the flows compile: %s", diagnostics).isTrue();
        }
    }
}
