package io.gosched.cluster.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Decides whether a {@link RequiresDocker} test runs: where a Docker engine answers, it does;
 * where none does, it is skipped with a message, unless Docker is required
 * ({@code GOSCHED_REQUIRE_DOCKER=true} or {@code -Dgosched.require-docker=true}), and then the
 * test class fails, naming what was missing. JUnit reports an exception thrown by a condition as
 * the class's failure.
 *
 * <p>Where the images are still being built ({@code GOSCHED_IMAGES_READY} names the file their
 * build writes its exit status to, as CI does to build them beside the first modules' tests), it
 * first waits for that build, and fails the class if the build failed, with the end of its log.
 */
public final class DockerCondition implements ExecutionCondition {

    /** The environment variable CI sets: a container test that cannot run is a failure. */
    public static final String REQUIRE_ENV = "GOSCHED_REQUIRE_DOCKER";

    /** A file that holds the image build's exit status once it ended; unset when the images exist already. */
    public static final String IMAGES_READY_ENV = "GOSCHED_IMAGES_READY";
    /** The image build's log, quoted when it failed. */
    public static final String IMAGES_LOG_ENV = "GOSCHED_IMAGES_LOG";
    /** The images take minutes on a cold machine; far longer means the build hangs. */
    static final Duration IMAGES_WAIT = Duration.ofMinutes(40);

    /** Per test JVM: the build ended with 0 (after that, nobody waits). */
    private static boolean imagesReady;

    private static final String HOW = "start one (e.g. .ci/docker-engine.sh start, then export the DOCKER_HOST it prints)";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (DockerClientFactory.instance().isDockerAvailable()) {
            awaitImages();
            return ConditionEvaluationResult.enabled("a Docker engine answers");
        }
        String why = "no Docker engine answers (DOCKER_HOST=" + System.getenv("DOCKER_HOST") + "): " + HOW;
        if (required()) {
            throw new IllegalStateException(REQUIRE_ENV + "=true, but " + why);
        }
        return ConditionEvaluationResult.disabled(why);
    }

    /** Whether a missing engine (or tool) must fail the test instead of skipping it. */
    public static boolean required() {
        String property = System.getProperty("gosched.require-docker");
        return Boolean.parseBoolean(property != null ? property : System.getenv(REQUIRE_ENV));
    }

    /**
     * For what a test needs besides the engine (docker-compose, say): returns when {@code present},
     * else fails the test where Docker is required and skips it with {@code why} elsewhere.
     */
    public static void requireOrSkip(boolean present, String why) {
        if (present) {
            return;
        }
        if (required()) {
            throw new AssertionError(REQUIRE_ENV + "=true, but " + why);
        }
        Assumptions.abort(why);
    }

    /** Returns once the images named by the environment are built; throws when their build failed or hangs. */
    static synchronized void awaitImages() {
        String marker = System.getenv(IMAGES_READY_ENV);
        if (imagesReady || marker == null || marker.isBlank()) {
            return;
        }
        Path status = Path.of(marker);
        long deadline = System.nanoTime() + IMAGES_WAIT.toNanos();
        if (!Files.exists(status)) {
            System.err.println("waiting for the container images to be built (" + IMAGES_READY_ENV + "=" + marker + ")");
        }
        try {
            while (!Files.exists(status)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the container images were not built within " + IMAGES_WAIT + logTail());
                }
                Thread.sleep(2000);
            }
            String exit = Files.readString(status).strip();
            if (!exit.equals("0")) {
                throw new IllegalStateException("the container images failed to build (exit " + exit + ")" + logTail());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + status, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the container images", e);
        }
        imagesReady = true;
    }

    private static String logTail() {
        String log = System.getenv(IMAGES_LOG_ENV);
        if (log == null || !Files.exists(Path.of(log))) {
            return "";
        }
        try {
            List<String> lines = Files.readAllLines(Path.of(log));
            return "; the end of " + log + ":\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "; " + log + " unreadable: " + e;
        }
    }
}
