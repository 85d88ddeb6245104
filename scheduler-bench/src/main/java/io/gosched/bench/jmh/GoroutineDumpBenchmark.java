package io.gosched.bench.jmh;

import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.GoroutineInfo;
import io.gosched.runtime.SchedulerConfig;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a goroutine dump costs (GoRuntime.goroutines, dumpGoroutines) with N goroutines parked in a
 * channel receive five frames deep, labelled, on GOMAXPROCS 2: the 10k and 100k. The dump
 * stops nothing; each parked goroutine is held in SCAN while its continuation is walked.
 * Run: java -jar scheduler-bench/target/benchmarks.jar GoroutineDumpBenchmark (see bench/README.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.vm=ALL-UNNAMED",
        "-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_currentThread", "-XX:+UseCompactObjectHeaders", "-Xms4g", "-Xmx4g"})
public class GoroutineDumpBenchmark {

    @Param({"10000", "100000"})
    public int goroutines;

    private GoRuntime rt;
    private Chan<Integer> never;

    /** The JDK's peer: as many virtual threads parked as deep (in a SynchronousQueue take). */
    private final java.util.concurrent.SynchronousQueue<Integer> vtNever = new java.util.concurrent.SynchronousQueue<>();
    private final java.util.List<Thread> vthreads = new java.util.ArrayList<>();

    @Setup(Level.Trial)
    public void park() throws Exception {
        parkGoroutines();
        CountDownLatch vstarted = new CountDownLatch(goroutines);
        for (int i = 0; i < goroutines; i++) {
            vthreads.add(Thread.ofVirtual().start(() -> {
                vstarted.countDown();
                vdepth(5);
            }));
        }
        vstarted.await();
        for (Thread t : vthreads) {
            while (t.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
        }
    }

    private void vdepth(int n) {
        if (n == 0) {
            try {
                vtNever.take();
            } catch (InterruptedException e) {
                return;
            }
        } else {
            vdepth(n - 1);
        }
    }

    /**
     * The peer of {@link #goroutines()}: every parked virtual thread's stack through
     * Thread.getStackTrace, the JDK's own walk of an unmounted continuation (what jcmd
     * Thread.dump_to_file does per thread).
     */
    @Benchmark
    public int virtualThreadStacks() {
        int frames = 0;
        for (Thread t : vthreads) {
            frames += t.getStackTrace().length;
        }
        return frames;
    }

    private void parkGoroutines() throws Exception {
        rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
        never = Chan.make();
        CountDownLatch started = new CountDownLatch(goroutines);
        rt.run(() -> {
            Go.withLabels(Map.of("bench", "dump"), () -> {
                for (int i = 0; i < goroutines; i++) {
                    Go.go(() -> {
                        started.countDown();
                        depth(5);
                    });
                }
            });
            return null;
        });
        started.await();
        while (rt.goroutines().stream().filter(g -> g.waitReason().equals("chan receive")).count() < goroutines) {
            Thread.sleep(10);
        }
    }

    private void depth(int n) {
        if (n == 0) {
            never.recv();
        } else {
            depth(n - 1);
        }
    }

    @TearDown(Level.Trial)
    public void release() {
        vthreads.forEach(Thread::interrupt);
        never.close();
        rt.close();
    }

    /** 1 op = one snapshot of every goroutine (stacks walked). */
    @Benchmark
    public List<GoroutineInfo> goroutines() {
        return rt.goroutines();
    }

    /** 1 op = the whole traceback text. */
    @Benchmark
    public String dumpGoroutines() {
        return rt.dumpGoroutines();
    }
}
