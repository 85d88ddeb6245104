package io.gosched.cluster.testing;

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
 */
public final class DockerCondition implements ExecutionCondition {

    /** The environment variable CI sets: a container test that cannot run is a failure. */
    public static final String REQUIRE_ENV = "GOSCHED_REQUIRE_DOCKER";

    private static final String HOW = "start one (e.g. .ci/docker-engine.sh start, then export the DOCKER_HOST it prints)";

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (DockerClientFactory.instance().isDockerAvailable()) {
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
}
