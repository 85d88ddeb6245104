package io.gosched.cluster.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class that needs a Docker engine: skipped with a message where none answers (a laptop
 * without Docker), failed where {@code GOSCHED_REQUIRE_DOCKER=true} (CI sets it, so that container
 * tests cannot pass by not running). See {@link DockerCondition}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(DockerCondition.class)
public @interface RequiresDocker {}
