package io.gosched.bench.peer;

import io.gosched.bench.Footprint;
import io.gosched.bench.HogState;
import io.gosched.bench.Measures;
import io.gosched.bench.Peer;
import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Select;
import io.gosched.runtime.SelectCase;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.sync.WaitGroup;
import io.gosched.time.Ticker;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The workloads on gosched, written as a Go programmer would write them and through the public
 * API only: {@link GoRuntime#run} for main, {@link Go#go}, {@link Chan}, {@link Select},
 * {@link WaitGroup}, {@link Go#yield}, {@link Go#sleep} and {@link Ticker}. Mirrors
 * {@code bench/go/main.go} line for line.
 */
public final class GoschedPeer implements Peer {
    private final GoRuntime rt;

    public GoschedPeer(int procs) {
        rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    @Override
    public String name() { return "gosched"; }

    @Override
    public String version() {
        return "gosched on JDK " + Runtime.version() + ", GOMAXPROCS=" + rt.gomaxprocs();
    }

    /** The body runs as the main goroutine; the calling platform thread waits. */
    private Result main(Callable<Result> body) throws Exception {
        return rt.run(body);
    }

    @Override
    public Result spawn(long n) throws Exception {
        return main(() -> {
            AtomicLong counter = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            long t0 = System.nanoTime();
            wg.add((int) n);
            for (long i = 0; i < n; i++) {
                Go.go(() -> {
                    counter.incrementAndGet();
                    wg.done();
                });
            }
            wg.await();
            return Result.perOp(counter.get(), System.nanoTime() - t0, n, "ns_op");
        });
    }

    @Override
    public Result pingpong(long n) throws Exception {
        return main(() -> {
            Chan<Long> ping = Chan.make(), pong = Chan.make();
            long t0 = System.nanoTime();
            Go.go(() -> {
                for (long i = 0; i < n; i++) pong.send(ping.recv() + 1);
            });
            long sum = 0;
            for (long i = 0; i < n; i++) {
                ping.send(i);
                sum += pong.recv();
            }
            return Result.perOp(sum, System.nanoTime() - t0, n, "ns_op");
        });
    }

    @Override
    public Result prodcons(long n, int capacity) throws Exception {
        return main(() -> {
            int parties = BenchWorkload.PARALLEL_PARTIES;
            long per = n / parties;
            Chan<Long> ch = Chan.make(capacity);
            AtomicLong sum = new AtomicLong();
            WaitGroup produced = new WaitGroup(), consumed = new WaitGroup();
            long t0 = System.nanoTime();
            consumed.add(parties);
            for (int c = 0; c < parties; c++) {
                Go.go(() -> {
                    long s = 0;
                    for (Long v; (v = ch.recv()) != null; ) s += v;   // null: closed and drained
                    sum.addAndGet(s);
                    consumed.done();
                });
            }
            produced.add(parties);
            for (int p = 0; p < parties; p++) {
                long base = p * per;
                Go.go(() -> {
                    for (long i = 0; i < per; i++) ch.send(base + i);
                    produced.done();
                });
            }
            produced.await();
            ch.close();
            consumed.await();
            return Result.perOp(sum.get(), System.nanoTime() - t0, per * parties, "ns_op");
        });
    }

    @Override
    public Result chain(long n, long traversals) throws Exception {
        return main(() -> {
            @SuppressWarnings("unchecked")
            Chan<Long>[] links = new Chan[(int) n + 1];
            for (int i = 0; i <= n; i++) links[i] = Chan.make();
            for (int i = 0; i < n; i++) {
                Chan<Long> in = links[i], out = links[i + 1];
                Go.go(() -> {
                    for (long t = 0; t < traversals; t++) out.send(in.recv() + 1);
                });
            }
            long sum = 0;
            long t0 = System.nanoTime();
            for (long t = 0; t < traversals; t++) {
                links[0].send(0L);
                sum += links[(int) n].recv();
            }
            return Result.perOp(sum, System.nanoTime() - t0, traversals, "us_op");
        });
    }

    @Override
    public Result forkjoin(int n) throws Exception {
        return main(() -> {
            long t0 = System.nanoTime();
            long f = fib(n);
            return Result.perOp(f, System.nanoTime() - t0, 1, "ms");
        });
    }

    private static long fib(int n) {
        if (n <= 2) return 1;
        Chan<Long> c = Chan.make(1);
        Go.go(() -> c.send(fib(n - 1)));
        long y = fib(n - 2);
        return c.recv() + y;
    }

    @Override
    public Result timers(long n, long sleeps) throws Exception {
        return main(() -> {
            AtomicLong count = new AtomicLong(), lateSum = new AtomicLong(), lateMax = new AtomicLong(), early = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            long t0 = System.nanoTime();
            wg.add((int) n);
            for (long i = 0; i < n; i++) {
                long id = i;
                Go.go(() -> {
                    long mySum = 0, myMax = 0, myEarly = 0;
                    for (long j = 0; j < sleeps; j++) {
                        long d = BenchWorkload.sleepMillis(id, j) * 1_000_000;
                        long s = System.nanoTime();
                        Go.sleep(Duration.ofNanos(d));
                        long late = System.nanoTime() - s - d;
                        if (late < 0) myEarly++;
                        mySum += Math.max(0, late);
                        myMax = Math.max(myMax, late);
                    }
                    count.addAndGet(sleeps);
                    lateSum.addAndGet(mySum);
                    lateMax.accumulateAndGet(myMax, Math::max);
                    early.addAndGet(myEarly);
                    wg.done();
                });
            }
            wg.await();
            return Measures.timers(count.get(), System.nanoTime() - t0, lateSum.get(), lateMax.get(), early.get());
        });
    }

    @Override
    public Result hog(long millis) throws Exception {
        return main(() -> {
            HogState st = new HogState();
            WaitGroup hogs = new WaitGroup();
            long[] gaps = new long[(int) (millis * 2 + 16)];
            int gapCount = 0;
            // The ticker is created before the hogs start: starvation before its first tick counts.
            Ticker ticker = Ticker.newTicker(Duration.ofNanos(BenchWorkload.HOG_TICK_NANOS));
            long prev = System.nanoTime();
            hogs.add(2);
            for (int h = 0; h < 2; h++) {
                int hog = h;
                Go.go(() -> {
                    st.iterations[hog] = HogState.spin(st);   // no safe point inside
                    hogs.done();
                });
            }
            Measures.hogStopper(millis, () -> st.stop = true);
            while (true) {
                ticker.c().recv();
                long now = System.nanoTime();
                if (gapCount < gaps.length) gaps[gapCount++] = now - prev;
                prev = now;
                if (st.stop) break;
            }
            ticker.stop();
            hogs.await();
            return Measures.hog(millis, gaps, gapCount, st.iterations[0], st.iterations[1]);
        });
    }

    @Override
    public Result select(long n) throws Exception {
        return main(() -> {
            int parties = BenchWorkload.PARALLEL_PARTIES;
            long per = n / parties;
            @SuppressWarnings("unchecked")
            Chan<Long>[] chans = new Chan[parties];
            SelectCase[] cases = new SelectCase[parties];
            for (int k = 0; k < parties; k++) {
                chans[k] = Chan.make();
                cases[k] = Select.recv(chans[k]);
            }
            long t0 = System.nanoTime();
            for (int k = 0; k < parties; k++) {
                Chan<Long> ch = chans[k];
                long base = k * per;
                Go.go(() -> {
                    for (long i = 0; i < per; i++) ch.send(base + i);
                });
            }
            long sum = 0, total = per * parties;
            for (long i = 0; i < total; i++) sum += (Long) Select.select(cases).value();
            return Result.perOp(sum, System.nanoTime() - t0, total, "ns_op");
        });
    }

    @Override
    public Result gosched(long n) throws Exception {
        return main(() -> {
            AtomicLong yields = new AtomicLong();
            WaitGroup wg = new WaitGroup();
            long t0 = System.nanoTime();
            wg.add(2);
            for (int g = 0; g < 2; g++) {
                Go.go(() -> {
                    for (long i = 0; i < n; i++) Go.yield();
                    yields.addAndGet(n);
                    wg.done();
                });
            }
            wg.await();
            return Result.perOp(yields.get(), System.nanoTime() - t0, n, "ns_op");
        });
    }

    @Override
    public Result parked(long n, long warmup) throws Exception {
        return main(() -> Measures.parkedRun(n, warmup, GoschedPeer::parkAll));
    }

    /** n goroutines each blocked in recv on its own channel; whileParked runs; then each gets its index. */
    private static long parkAll(long n, Runnable whileParked) {
        @SuppressWarnings("unchecked")
        Chan<Long>[] chans = new Chan[(int) n];
        AtomicLong sum = new AtomicLong();
        WaitGroup ready = new WaitGroup(), done = new WaitGroup();
        ready.add((int) n);
        done.add((int) n);
        for (int i = 0; i < n; i++) {
            Chan<Long> c = Chan.make();
            chans[i] = c;
            Go.go(() -> {
                ready.done();
                sum.addAndGet(c.recv());
                done.done();
            });
        }
        ready.await();
        // The last goroutines to say "ready" are a few instructions from parking.
        Go.sleep(Duration.ofMillis(50));
        whileParked.run();
        for (int i = 0; i < n; i++) chans[i].send((long) i);
        done.await();
        return sum.get();
    }

    @Override
    public Result wakeup(long n) throws Exception {
        return main(() -> {
            Chan<Long> ch = Chan.make();
            long[] latency = new long[(int) n];
            AtomicLong received = new AtomicLong();
            WaitGroup done = new WaitGroup();
            done.add(1);
            Go.go(() -> {
                for (int i = 0; i < n; i++) {
                    long sent = ch.recv();
                    latency[i] = System.nanoTime() - sent;
                    received.set(i + 1);
                }
                done.done();
            });
            long[] missed = new long[1];
            // The service's path: a Netty thread completing a channel operation with sendAsync.
            // The hand-off to a parked receiver completes the future before sendAsync returns.
            Thread sender = Thread.ofPlatform().name("wakeup-sender").start(() ->
                    missed[0] = Measures.driveWakeups(n, received::get, t -> ch.sendAsync(t).isDone(), false));
            done.await();   // main parks too: every P is idle between the sends
            sender.join();
            return Measures.wakeup(latency, (int) n, missed[0]);
        });
    }

    @Override
    public void close() {
        rt.close();
    }
}
