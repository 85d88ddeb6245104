package io.gosched.bench.jmh;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What recording a goroutine's creation frame (GoroutineInfo.createdAt) costs a spawn: the body a
 * lambda (its frame cached per lambda class after the first go), or a named Runnable class (a
 * stack walk at every go call). 1 op = one goroutine spawned and finished, GOMAXPROCS 2.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 6, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
        "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders", "-Xms2g", "-Xmx2g"})
public class SpawnCreationSiteBenchmark {
    static final int N = 100_000;

    private GoRuntime rt;

    @Setup
    public void setUp() {
        rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    }

    @TearDown
    public void tearDown() {
        rt.close();
    }

    /** A named class: not one place in the source, so its go call is walked for every time. */
    static final class Incr implements Runnable {
        final AtomicInteger n;
        final Chan<Boolean> done;

        Incr(AtomicInteger n, Chan<Boolean> done) {
            this.n = n;
            this.done = done;
        }

        @Override
        public void run() {
            if (n.incrementAndGet() == N) {
                done.close();
            }
        }
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public int lambda() throws Exception {
        return rt.run(() -> {
            AtomicInteger n = new AtomicInteger();
            Chan<Boolean> done = Chan.make();
            for (int i = 0; i < N; i++) {
                Go.go(() -> {
                    if (n.incrementAndGet() == N) {
                        done.close();
                    }
                });
            }
            done.recv();
            return n.get();
        });
    }

    @Benchmark
    @OperationsPerInvocation(N)
    public int namedClass() throws Exception {
        return rt.run(() -> {
            AtomicInteger n = new AtomicInteger();
            Chan<Boolean> done = Chan.make();
            Incr body = new Incr(n, done);
            for (int i = 0; i < N; i++) {
                Go.go(body);
            }
            done.recv();
            return n.get();
        });
    }
}
