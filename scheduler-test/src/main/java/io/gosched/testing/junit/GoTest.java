package io.gosched.testing.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A JUnit 5 test that runs inside {@link io.gosched.testing.Synctest#test}: as the root goroutine
 * of a bubble with a fake clock, on a fresh gosched runtime with {@link #gomaxprocs()} Ps that is
 * closed afterwards. The test fails, with a goroutine dump, when the bubble deadlocks, when a
 * goroutine is left blocked after the test method returned (a leak), or when any goroutine throws
 * an uncaught exception. Use it instead of {@code @Test}:
 *
 * <pre>{@code
 * @GoTest(gomaxprocs = 4)
 * void timesOut() {
 *     Chan<String> reply = Chan.make();
 *     var r = Select.select(Select.recv(reply), Select.recv(Time.after(Duration.ofSeconds(30))));
 *     assertEquals(1, r.index());   // took no real time
 * }
 * }</pre>
 *
 * Or put {@code @ExtendWith(GoTestExtension.class)} on a class to run each of its {@code @Test}
 * methods so (with GOMAXPROCS = the available processors).
 */
@Documented
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Test
@ExtendWith(GoTestExtension.class)
public @interface GoTest {
    /** GOMAXPROCS of the test's runtime. */
    int gomaxprocs() default 2;
}
