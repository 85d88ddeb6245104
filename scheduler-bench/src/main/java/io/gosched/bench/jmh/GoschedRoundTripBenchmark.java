package io.gosched.bench.jmh;

import io.gosched.bench.Peer;
import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import io.gosched.bench.peer.PeerMain;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A Gosched round trip on ONE P: two goroutines yield to each other (Go.yield against
 * Thread.yield). Its own class because the virtual-thread scheduler's parallelism is JVM-wide:
 * this fork runs it at 1, and gosched gets a GOMAXPROCS=1 runtime. 1 op = one round trip (each of
 * the two goroutines yields once).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
        "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders",
        "-Djdk.virtualThreadScheduler.parallelism=1"})
public class GoschedRoundTripBenchmark {
    static final int YIELDS = 100_000;

    @Param({"gosched", "vt"})
    public String peer;

    private Peer impl;

    @Setup
    public void setUp() {
        impl = PeerMain.create(peer, 1);
    }

    @TearDown
    public void tearDown() {
        impl.close();
    }

    @Benchmark
    @OperationsPerInvocation(YIELDS)
    public Result gosched() throws Exception {
        return PeerBenchmarks.checked(BenchWorkload.GOSCHED, YIELDS, 0, impl.gosched(YIELDS));
    }
}
