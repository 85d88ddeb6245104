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
 * gosched against JDK virtual threads in the same JMH run, on the workloads of the comparison
 * harness ({@link BenchWorkload}), both at parallelism 2. One JMH operation is one goroutine, round
 * trip, message or select (the workload's unit, via {@link OperationsPerInvocation}); chain is per
 * traversal and forkjoin per fib(25). Each invocation checks its result, so a broken runtime fails
 * the benchmark instead of reporting a time. Run: see bench/README.md.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
        "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders", "-Xmx3g",
        "-Djdk.virtualThreadScheduler.parallelism=2"})
public class PeerBenchmarks {
    static final int SPAWN = 100_000, PINGPONG = 100_000, PRODCONS = 400_000, PRODCONS0 = 100_000,
            CHAIN_LENGTH = 10_000, CHAIN_TRAVERSALS = 10, FIB = 25, SELECT = 100_000;

    @Param({"gosched", "vt"})
    public String peer;

    private Peer impl;

    @Setup
    public void setUp() {
        impl = PeerMain.create(peer, 2);
    }

    @TearDown
    public void tearDown() {
        impl.close();
    }

    static Result checked(BenchWorkload w, long n, long m, Result r) {
        long want = w.expected(n, m);
        if (r.check() != want) throw new IllegalStateException(w.id() + ": check " + r.check() + ", want " + want);
        return r;
    }

    /** 1 op = spawning one goroutine that does an atomic increment, and waiting for it. */
    @Benchmark
    @OperationsPerInvocation(SPAWN)
    public Result spawn() throws Exception {
        return checked(BenchWorkload.SPAWN, SPAWN, 0, impl.spawn(SPAWN));
    }

    /** 1 op = one round trip over two unbuffered channels. */
    @Benchmark
    @OperationsPerInvocation(PINGPONG)
    public Result pingpong() throws Exception {
        return checked(BenchWorkload.PINGPONG, PINGPONG, 0, impl.pingpong(PINGPONG));
    }

    /** 1 op = one message, 4 producers x 4 consumers over a 128-slot channel. */
    @Benchmark
    @OperationsPerInvocation(PRODCONS)
    public Result prodcons128() throws Exception {
        return checked(BenchWorkload.PRODCONS, PRODCONS, 128, impl.prodcons(PRODCONS, 128));
    }

    /** 1 op = one message, 4 producers x 4 consumers over an unbuffered channel. */
    @Benchmark
    @OperationsPerInvocation(PRODCONS0)
    public Result prodcons0() throws Exception {
        return checked(BenchWorkload.PRODCONS0, PRODCONS0, 0, impl.prodcons(PRODCONS0, 0));
    }

    /** 1 op = one traversal of a daisy chain of 10,000 goroutines. */
    @Benchmark
    @OperationsPerInvocation(CHAIN_TRAVERSALS)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public Result chain() throws Exception {
        return checked(BenchWorkload.CHAIN, CHAIN_LENGTH, CHAIN_TRAVERSALS, impl.chain(CHAIN_LENGTH, CHAIN_TRAVERSALS));
    }

    /** 1 op = fib(25) with a goroutine per call above n=2, joined through a 1-slot channel. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public Result forkjoin() throws Exception {
        return checked(BenchWorkload.FORKJOIN, FIB, 0, impl.forkjoin(FIB));
    }

    /** 1 op = one 4-case select receiving from 4 senders. */
    @Benchmark
    @OperationsPerInvocation(SELECT)
    public Result select() throws Exception {
        return checked(BenchWorkload.SELECT, SELECT, 0, impl.select(SELECT));
    }
}
