package io.gosched.sync;

import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoTesting;
import io.gosched.runtime.PanicNilException;
import io.gosched.runtime.GoTesting.Mode;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/oncefunc_test.go. */
class OnceFuncTest {

    /** Go: TestOnceFunc (calls == 1, and no allocation per call). */
    @Test
    void testOnceFunc() {
        int[] calls = {0};
        Runnable f = Once.onceFunc(() -> calls[0]++);
        long allocs = allocatedBytesPerRun(10_000, f);
        assertThat(calls[0]).isEqualTo(1);
        assertThat(allocs).as("bytes allocated by 10,000 calls after the first").isZero();
    }

    /** Go: TestOnceValue. */
    @Test
    void testOnceValue() {
        int[] calls = {0};
        Supplier<Integer> f = Once.onceValue(() -> {
            calls[0]++;
            return calls[0];
        });
        long allocs = allocatedBytesPerRun(10_000, f::get);
        int value = f.get();
        assertThat(calls[0]).isEqualTo(1);
        assertThat(value).isEqualTo(1);
        assertThat(allocs).isZero();
    }

    /** Go: TestOnceValues. */
    @Test
    void testOnceValues() {
        int[] calls = {0};
        Supplier<Map.Entry<Integer, Integer>> f = Once.onceValues(() -> {
            calls[0]++;
            return Map.entry(calls[0], calls[0] + 1);
        });
        long allocs = allocatedBytesPerRun(10_000, f::get);
        Map.Entry<Integer, Integer> v = f.get();
        assertThat(calls[0]).isEqualTo(1);
        assertThat(v.getKey()).isEqualTo(1);
        assertThat(v.getValue()).isEqualTo(2);
        assertThat(allocs).isZero();
    }

    /** Go: testOncePanicWith. Every call throws the same exception; f ran once. */
    private static void testOncePanicX(int[] calls, Runnable f) {
        RuntimeException first = null;
        for (String label : new String[] {"first time", "second time"}) {
            Throwable p = catchThrowable(f::run);
            assertThat(p).as("%s: f did not panic", label).isNotNull();
            assertThat(p).as(label).isInstanceOf(IllegalStateException.class).hasMessage("x");
            if (first == null) {
                first = (RuntimeException) p;
            } else {
                assertThat(p).as("%s: the same exception as the first time", label).isSameAs(first);
            }
        }
        assertThat(calls[0]).as("calls").isEqualTo(1);
    }

    /** Go: TestOnceFuncPanic. */
    @Test
    void testOnceFuncPanic() {
        int[] calls = {0};
        Runnable f = Once.onceFunc(() -> {
            calls[0]++;
            throw new IllegalStateException("x");
        });
        testOncePanicX(calls, f);
    }

    /** Go: TestOnceValuePanic. */
    @Test
    void testOnceValuePanic() {
        int[] calls = {0};
        Supplier<Integer> f = Once.onceValue(() -> {
            calls[0]++;
            throw new IllegalStateException("x");
        });
        testOncePanicX(calls, f::get);
    }

    /** Go: TestOnceValuesPanic. */
    @Test
    void testOnceValuesPanic() {
        int[] calls = {0};
        Supplier<Map.Entry<Integer, Integer>> f = Once.onceValues(() -> {
            calls[0]++;
            throw new IllegalStateException("x");
        });
        testOncePanicX(calls, f::get);
    }

    /** Go: TestOnceFuncPanicTraceback. The first call's exception reaches back to where f threw. */
    @Test
    void testOnceFuncPanicTraceback() {
        Runnable f = Once.onceFunc(OnceFuncTest::onceFuncPanic);
        Throwable p = catchThrowable(f::run);
        assertThat(p).hasMessage("x");
        assertThat(p.getStackTrace()).anyMatch(e -> e.getMethodName().equals("onceFuncPanic"));
    }

    private static void onceFuncPanic() {
        throw new IllegalStateException("x");
    }

    /**
     * Go: TestOnceXGC. The wrapped function (and what it captures) stays alive until the first
     * call and is collectable after it, while the wrapper is still referenced.
     */
    @Test
    void testOnceXGC() {
        Map<String, Function<byte[], Runnable>> fns = new LinkedHashMap<>();
        fns.put("OnceFunc", buf -> Once.onceFunc(() -> buf[0] = 1));
        fns.put("OnceValue", buf -> {
            Supplier<Object> f = Once.onceValue(() -> {
                buf[0] = 1;
                return null;
            });
            return f::get;
        });
        fns.put("OnceValues", buf -> {
            Supplier<Map.Entry<Object, Object>> f = Once.onceValues(() -> {
                buf[0] = 1;
                return Map.entry("a", "b");
            });
            return f::get;
        });
        fns.put("OnceFunc panic", buf -> Once.onceFunc(() -> {
            buf[0] = 1;
            throw new IllegalStateException("test panic");
        }));
        fns.put("OnceValue panic", buf -> {
            Supplier<Object> f = Once.onceValue(() -> {
                buf[0] = 1;
                throw new IllegalStateException("test panic");
            });
            return f::get;
        });
        fns.forEach((name, fn) -> {
            byte[] buf = new byte[1024];
            WeakReference<byte[]> ref = new WeakReference<>(buf);
            Runnable f = fn.apply(buf);
            buf = null;
            gc();
            assertThat(ref.get()).as("%s: wrapped function garbage collected too early", name).isNotNull();
            catchThrowable(f::run);
            for (int i = 0; i < 20 && ref.get() != null; i++) {
                gc();
            }
            assertThat(ref.get()).as("%s: wrapped function should be garbage collected, but still live", name).isNull();
            catchThrowable(f::run);
        });
    }

    /** Concurrent first calls: f runs once, every caller sees its result (or its exception). */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void concurrentCallersAllSeeTheOneResult(Mode mode) throws Exception {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger wrong = new AtomicInteger();
        mode.run(4, () -> {
            for (int round = 0; round < 20; round++) {
                boolean fail = round % 2 == 1;
                Object result = new Object();
                Supplier<Object> f = Once.onceValue(() -> {
                    calls.incrementAndGet();
                    for (int k = 0; k < 10_000; k++) {
                        Thread.onSpinWait();
                    }
                    if (fail) {
                        throw new IllegalStateException("round");
                    }
                    return result;
                });
                Chan<Boolean> done = Chan.make(8);
                for (int i = 0; i < 8; i++) {
                    spawn(() -> {
                        try {
                            if (f.get() != result || fail) {
                                wrong.incrementAndGet();
                            }
                        } catch (IllegalStateException e) {
                            if (!fail) {
                                wrong.incrementAndGet();
                            }
                        }
                        done.send(true);
                    });
                }
                for (int i = 0; i < 8; i++) {
                    done.recv();
                }
            }
        });
        assertThat(calls.get()).as("one call per wrapper (%s)", mode).isEqualTo(20);
        assertThat(wrong.get()).as("callers that saw another result (%s)", mode).isZero();
    }

    /**
     * Go 1.21+: when f ends by runtime.Goexit, OnceFunc's deferred recover() gets nil and the
     * wrapper re-panics with it, so every call, the first one's included, panics with a
     * runtime.PanicNilError; f still runs once. Nobody's goroutine ends silently: a caller that
     * came second must not Goexit for f. Callers race on 2 Ps; onceFunc and onceValue alternate.
     */
    @Test
    void onceFuncWhoseFunctionGoexitsPanicsInEveryCaller() throws Exception {
        int callers = 4;
        GoTesting.runGo(2, () -> {
            for (int round = 0; round < 200 * GoTesting.STRESS; round++) {
                AtomicInteger calls = new AtomicInteger();
                Runnable f;
                if (round % 2 == 0) {
                    f = Once.onceFunc(() -> {
                        calls.incrementAndGet();
                        Go.goexit();
                    });
                } else {
                    Supplier<Object> v = Once.onceValue(() -> {
                        calls.incrementAndGet();
                        Go.goexit();
                        return "unreachable";
                    });
                    f = v::get;
                }
                Chan<String> outcomes = Chan.make(callers);
                for (int i = 0; i < callers; i++) {
                    Go.go(() -> {
                        String outcome = "returned";
                        try {
                            f.run();
                        } catch (PanicNilException e) {
                            outcome = "PanicNilException";
                        } catch (Go.Goexit e) {
                            outcome = "Goexit";
                        } catch (Throwable t) {
                            outcome = t.toString();
                        } finally {
                            outcomes.send(outcome);
                        }
                    });
                }
                List<String> got = new ArrayList<>();
                for (int i = 0; i < callers; i++) {
                    got.add(outcomes.recv());
                }
                assertThat(got).as("round %d: what each caller got", round)
                        .containsOnly("PanicNilException");
                assertThat(calls.get()).as("round %d: f's runs", round).isEqualTo(1);
            }
        });
    }

    /** Go's testing.AllocsPerRun, in bytes: one warm-up call, then the heap bytes of n calls. */
    private static long allocatedBytesPerRun(int n, Runnable f) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        f.run();
        // Measure twice and keep the smaller: the first measurement may include the JIT's or the
        // MXBean's own one-time allocations.
        long best = Long.MAX_VALUE;
        for (int attempt = 0; attempt < 3; attempt++) {
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                f.run();
            }
            best = Math.min(best, mx.getCurrentThreadAllocatedBytes() - before);
        }
        return best;
    }

    private static void gc() {
        System.gc();
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
