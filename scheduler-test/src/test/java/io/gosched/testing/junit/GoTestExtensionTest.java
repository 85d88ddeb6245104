package io.gosched.testing.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.Select;
import io.gosched.testing.Synctest;
import io.gosched.time.Time;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs the example tests below through the JUnit Platform launcher and checks how {@link GoTest}
 * reports each outcome. The examples are nested classes, which Surefire does not run by itself.
 */
@Timeout(120)
class GoTestExtensionTest {

    static final Instant START = Instant.parse("2000-01-01T00:00:00Z");

    /** Example tests; each is run alone by {@link #run}. */
    static class Examples {
        @GoTest(gomaxprocs = 3)
        void thirtySecondTimeoutTakesNoTime() {
            assertEquals(3, Go.runtime().gomaxprocs());
            Chan<String> reply = Chan.make();
            int idx = Select.select(Select.recv(reply), Select.recv(Time.after(Duration.ofSeconds(30)))).index();
            assertEquals(1, idx);
            assertEquals(START.plusSeconds(30), Time.now());
        }

        @GoTest
        void deadlocks() {
            Chan<String> c = Chan.make();
            c.recv();
        }

        @GoTest
        void leaksAGoroutine() {
            Chan<String> c = Chan.make();
            Go.go(c::recv);
        }

        @GoTest
        void goroutineThrows() {
            Go.go(() -> {
                throw new IllegalStateException("thrown in a child");
            });
            Go.sleep(Duration.ofSeconds(1));
        }

        @GoTest
        void assertionFails() {
            assertEquals(1, 2, "plain assertion");
        }
    }

    /** The class-level form: every @Test of the class runs in a bubble. */
    @ExtendWith(GoTestExtension.class)
    static class ClassLevel {
        @Test
        void inABubble() {
            Go.sleep(Duration.ofHours(1));
            assertEquals(START.plus(Duration.ofHours(1)), Time.now());
            Synctest.await();
        }
    }

    /** The result of running one example: null when it passed, else its failure. */
    static Throwable run(Class<?> c, String method) {
        List<Throwable> failures = new ArrayList<>();
        List<String> finished = new ArrayList<>();
        LauncherDiscoveryRequest req = LauncherDiscoveryRequestBuilder.request().selectors(selectMethod(c, method)).build();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(req, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) {
                    finished.add(id.getDisplayName());
                    result.getThrowable().ifPresent(failures::add);
                }
            }
        });
        assertThat(finished).as("tests run").hasSize(1);
        return failures.isEmpty() ? null : failures.get(0);
    }

    @Test
    void passingTestRunsOnTheBubbleClockWithTheChosenGomaxprocs() {
        long t0 = System.nanoTime();
        assertThat(run(Examples.class, "thirtySecondTimeoutTakesNoTime")).isNull();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30)); // never waited 30 s
    }

    @Test
    void deadlockFailsWithGoMessageAndDump() {
        Throwable f = run(Examples.class, "deadlocks");
        assertThat(f).isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("deadlock: all goroutines in bubble are blocked\n\n")
                .hasMessageContaining("[chan receive (durable)")
                .hasMessageContaining("Examples.deadlocks");
    }

    @Test
    void leakedGoroutineFailsWithDump() {
        Throwable f = run(Examples.class, "leaksAGoroutine");
        assertThat(f).isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("goroutines leaked")
                .hasMessageContaining("[chan receive (durable)");
    }

    @Test
    void uncaughtGoroutineExceptionFails() {
        Throwable f = run(Examples.class, "goroutineThrows");
        assertThat(f).isInstanceOf(AssertionError.class).hasMessageStartingWith("uncaught exception in goroutine");
        assertThat(f.getCause()).isInstanceOf(IllegalStateException.class).hasMessage("thrown in a child");
    }

    @Test
    void assertionFailureIsReportedAsIs() {
        assertThat(run(Examples.class, "assertionFails")).isInstanceOf(AssertionError.class).hasMessageContaining("plain assertion");
    }

    @Test
    void classLevelExtensionRunsEachTestInABubble() {
        assertThat(run(ClassLevel.class, "inABubble")).isNull();
    }
}
