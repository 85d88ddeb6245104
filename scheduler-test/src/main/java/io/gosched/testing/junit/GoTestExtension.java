package io.gosched.testing.junit;

import io.gosched.runtime.DeadlockException;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.gosched.runtime.GoroutinePanicException;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.testing.Synctest;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Runs each test method inside {@link Synctest#test} on a fresh runtime (see {@link GoTest}).
 *
 * <p>Failures. A {@link DeadlockException} from the bubble becomes an {@link AssertionError}
 * carrying Go's message and the dump; when the method had returned and goroutines it started are
 * still blocked, the message says they leaked. An uncaught exception in any goroutine ends the
 * runtime (its panic policy is CRASH) and fails the test with that exception as the cause.
 * Goroutines the test left on the runtime outside its bubble (started through another path, or
 * found leaked by the garbage collector) fail it too.
 */
public final class GoTestExtension implements InvocationInterceptor {

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
                                    ExtensionContext extensionContext) throws Throwable {
        Method m = invocationContext.getExecutable();
        Optional<GoTest> ann = AnnotationSupport.findAnnotation(m, GoTest.class);
        int procs = ann.map(GoTest::gomaxprocs).orElse(Runtime.getRuntime().availableProcessors());
        SchedulerConfig config = SchedulerConfig.builder()
                .gomaxprocs(procs)
                .name("gotest-" + m.getName())
                .onUncaughtException(SchedulerConfig.PanicPolicy.CRASH)
                .build();
        GoRuntime rt = GoRuntime.start(config);
        boolean clean = false;
        try {
            rt.run(() -> {
                Synctest.test(() -> proceed(invocation));
                List<GoroutineInfo> left = rt.goroutines().stream().filter(g -> !g.is(GoroutineInfo.State.RUNNING)).toList();
                if (!left.isEmpty()) {
                    throw new AssertionError("goroutines leaked: the test left " + left.size()
                            + " goroutine(s) outside its bubble\n\n" + GoRuntime.traceback(left));
                }
                return null;
            });
            List<GoroutineInfo> leaked = rt.leakedGoroutines();
            if (!leaked.isEmpty()) {
                throw new AssertionError("goroutines leaked (unreachable and blocked forever, found by the GC)\n\n"
                        + GoRuntime.traceback(leaked));
            }
            clean = true;
        } catch (DeadlockException e) {
            String reason = e.reason().contains("main bubble goroutine has exited")
                    ? "goroutines leaked: the test returned but goroutines it started are blocked forever (" + e.reason() + ")"
                    : e.reason();
            AssertionError failure = new AssertionError(reason + "\n\n" + e.dump(), e);
            throw failure;
        } catch (GoroutinePanicException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new AssertionError("uncaught exception in goroutine " + e.goid() + ": " + cause, cause);
        } finally {
            rt.shutdown(clean ? config.shutdownTimeout() : Duration.ZERO);
        }
    }

    private static void proceed(Invocation<Void> invocation) {
        try {
            invocation.proceed();
        } catch (Throwable t) {
            sneakyThrow(t);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
        throw (T) t;
    }
}
