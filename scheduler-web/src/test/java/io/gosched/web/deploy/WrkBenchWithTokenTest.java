package io.gosched.web.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The wrk load test ({@code deploy/loadtest/wrk-bench.sh}, Debian's wrk) against a service that
 * requires a token: with {@code WRK_TOKEN} every request is answered 2xx; without it the script
 * stops at once, saying no service answered, instead of measuring 401s.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gosched.api.token=" + WrkBenchWithTokenTest.TOKEN)
class WrkBenchWithTokenTest {

    static final String TOKEN = "wrk-token-0123456789";

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    @Test
    void theScriptSendsTheToken() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/wrk")), "/usr/bin/wrk missing: install Debian package 'wrk' (CI does) to run this test");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/curl")), "/usr/bin/curl missing: install Debian package 'curl' to run this test");

        Run with = run(Map.of("WRK_TOKEN", TOKEN));
        assertThat(with.exit()).as(with.output()).isZero();
        List<String> results = with.output().lines().filter(l -> l.startsWith("RESULT ")).toList();
        assertThat(results).as(with.output()).hasSize(2);
        assertThat(results.get(0)).startsWith("RESULT name=job_submissions");
        assertThat(results.get(1)).startsWith("RESULT name=channel_ops");
        for (String r : results) {
            assertThat(r).as("every request answered 2xx").contains(" non2xx=0 ").doesNotContain("requests=0 ");
        }

        Run without = run(Map.of());
        assertThat(without.exit()).isEqualTo(1);
        assertThat(without.output()).contains("no gosched service at").doesNotContain("RESULT");
        Run wrong = run(Map.of("WRK_TOKEN", "not-the-token-0123456789"));
        assertThat(wrong.exit()).isEqualTo(1);
    }

    record Run(int exit, String output) {}

    private Run run(Map<String, String> env) throws Exception {
        Path log = dir.resolve("wrk-" + System.nanoTime() + ".log");
        ProcessBuilder pb = new ProcessBuilder("bash", Dashboard.repoRoot().resolve("deploy/loadtest/wrk-bench.sh").toString(),
                "http://127.0.0.1:" + port).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("WRK_TOKEN");
        pb.environment().putAll(Map.of("DURATION", "1s", "THREADS", "1", "CONNECTIONS", "2"));
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("wrk-bench.sh did not finish in 120 s: " + Files.readString(log));
        }
        return new Run(p.exitValue(), Files.readString(log));
    }
}
