package io.gosched.bench.jmh;

import io.gosched.bench.jmh.agentcost.ByHand;
import io.gosched.bench.jmh.agentcost.Instrumented;
import io.gosched.bench.jmh.agentcost.Plain;
import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the preemption agent costs a tight loop while nobody is asked to yield (the common case):
 * the same loops uninstrumented ({@code plain*}), instrumented by the agent
 * ({@code instrumented*}: a {@code SafePoint.poll()} per back-edge and call), and with
 * {@code Go.checkpoint()} written in by hand ({@code byHand*}). The ratios instrumented/plain
 * and byHand/plain of one run are the cost. Needs the agent:
 * <pre>
 *   java -jar scheduler-bench/target/benchmarks.jar AgentCostBenchmark \
 *     -jvmArgsPrepend -javaagent:scheduler-agent/target/scheduler-agent-0.1.0-SNAPSHOT.jar=io.gosched.bench.jmh.agentcost.Instrumented
 * </pre>
 * (bench/agent.sh does it.) Runs on a platform thread: the fast path is the same there as in a goroutine.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
        "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders"})
public class AgentCostBenchmark {
    static final int N = 1024;

    private int[] data;
    private int n;
    private final io.gosched.bench.HogState st = new io.gosched.bench.HogState();

    @Setup
    public void setup() {
        boolean agent = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.startsWith("-javaagent:") && a.contains("scheduler-agent") && a.contains("agentcost.Instrumented"));
        if (!agent) {
            throw new IllegalStateException("AgentCostBenchmark needs the agent: -jvmArgsPrepend "
                    + "-javaagent:scheduler-agent/target/scheduler-agent-<version>.jar=io.gosched.bench.jmh.agentcost.Instrumented");
        }
        data = new SplittableRandom(42).ints(N, 0, 1000).toArray();
        n = N; // not a constant: the JIT cannot fold the loops
    }

    @Benchmark
    public long plainSum() {
        return Plain.sum(data);
    }

    @Benchmark
    public long instrumentedSum() {
        return Instrumented.sum(data);
    }

    @Benchmark
    public long byHandSum() {
        return ByHand.sum(data);
    }

    @Benchmark
    public long plainHash() {
        return Plain.hash(n);
    }

    @Benchmark
    public long instrumentedHash() {
        return Instrumented.hash(n);
    }

    @Benchmark
    public long byHandHash() {
        return ByHand.hash(n);
    }

    @Benchmark
    public long plainSpin() {
        return Plain.spin(st, n);
    }

    @Benchmark
    public long instrumentedSpin() {
        return Instrumented.spin(st, n);
    }

    @Benchmark
    public long plainCalls() {
        return Plain.calls(n);
    }

    @Benchmark
    public long instrumentedCalls() {
        return Instrumented.calls(n);
    }
}
