package io.gosched.bench.peer;

import io.gosched.bench.Footprint;
import io.gosched.bench.HogState;
import io.gosched.bench.Measures;
import io.gosched.bench.Peer;
import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The workloads on JDK virtual threads with the JDK's own hand-off structures: a channel of
 * capacity 0 is a {@link SynchronousQueue}, of capacity N an {@link ArrayBlockingQueue}, a
 * WaitGroup a {@link CountDownLatch}. "close" is a poison value per consumer, since JDK queues
 * cannot be closed. Parallelism is the JVM-wide {@code jdk.virtualThreadScheduler.parallelism}.
 */
public final class VirtualThreadPeer implements Peer {
    /** Poison for the prodcons consumers: the JDK queues have no close. */
    private static final Long POISON = -1L;

    @Override
    public String name() { return "vt"; }

    @Override
    public String version() {
        return "JDK " + Runtime.version() + " virtual threads, parallelism "
                + System.getProperty("jdk.virtualThreadScheduler.parallelism", "default");
    }

    /** Runs body in a virtual thread (the peer's "main goroutine") and waits for it. */
    private static Result inVirtualThread(Callable<Result> body) throws Exception {
        AtomicReference<Object> out = new AtomicReference<>();
        Thread t = Thread.ofVirtual().name("vt-main").start(() -> {
            try {
                out.set(body.call());
            } catch (Throwable e) {
                out.set(e);
            }
        });
        t.join();
        Object o = out.get();
        if (o instanceof Exception e) throw e;
        if (o instanceof Error e) throw e;
        return (Result) o;
    }

    private static <T> BlockingQueue<T> channel(int capacity) {
        return capacity == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(capacity);
    }

    @Override
    public Result spawn(long n) throws Exception {
        return inVirtualThread(() -> {
            AtomicLong counter = new AtomicLong();
            CountDownLatch done = new CountDownLatch((int) n);
            long t0 = System.nanoTime();
            for (long i = 0; i < n; i++) {
                Thread.startVirtualThread(() -> {
                    counter.incrementAndGet();
                    done.countDown();
                });
            }
            done.await();
            return Result.perOp(counter.get(), System.nanoTime() - t0, n, "ns_op");
        });
    }

    @Override
    public Result pingpong(long n) throws Exception {
        return inVirtualThread(() -> {
            SynchronousQueue<Long> ping = new SynchronousQueue<>(), pong = new SynchronousQueue<>();
            long t0 = System.nanoTime();
            Thread.startVirtualThread(() -> {
                try {
                    for (long i = 0; i < n; i++) pong.put(ping.take() + 1);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long sum = 0;
            for (long i = 0; i < n; i++) {
                ping.put(i);
                sum += pong.take();
            }
            return Result.perOp(sum, System.nanoTime() - t0, n, "ns_op");
        });
    }

    @Override
    public Result prodcons(long n, int capacity) throws Exception {
        return inVirtualThread(() -> {
            int parties = BenchWorkload.PARALLEL_PARTIES;
            long per = n / parties;
            BlockingQueue<Long> ch = channel(capacity);
            AtomicLong sum = new AtomicLong();
            CountDownLatch produced = new CountDownLatch(parties), consumed = new CountDownLatch(parties);
            long t0 = System.nanoTime();
            for (int c = 0; c < parties; c++) {
                Thread.startVirtualThread(() -> {
                    long s = 0;
                    try {
                        for (Long v; (v = ch.take()) != POISON; ) s += v;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    sum.addAndGet(s);
                    consumed.countDown();
                });
            }
            for (int p = 0; p < parties; p++) {
                long base = p * per;
                Thread.startVirtualThread(() -> {
                    try {
                        for (long i = 0; i < per; i++) ch.put(base + i);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    produced.countDown();
                });
            }
            produced.await();
            for (int c = 0; c < parties; c++) ch.put(POISON);
            consumed.await();
            return Result.perOp(sum.get(), System.nanoTime() - t0, per * parties, "ns_op");
        });
    }

    @Override
    public Result chain(long n, long traversals) throws Exception {
        return inVirtualThread(() -> {
            @SuppressWarnings("unchecked")
            SynchronousQueue<Long>[] links = new SynchronousQueue[(int) n + 1];
            for (int i = 0; i <= n; i++) links[i] = new SynchronousQueue<>();
            for (int i = 0; i < n; i++) {
                SynchronousQueue<Long> in = links[i], out = links[i + 1];
                Thread.startVirtualThread(() -> {
                    try {
                        for (long t = 0; t < traversals; t++) out.put(in.take() + 1);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            long sum = 0;
            long t0 = System.nanoTime();
            for (long t = 0; t < traversals; t++) {
                links[0].put(0L);
                sum += links[(int) n].take();
            }
            return Result.perOp(sum, System.nanoTime() - t0, traversals, "us_op");
        });
    }

    @Override
    public Result forkjoin(int n) throws Exception {
        return inVirtualThread(() -> {
            long t0 = System.nanoTime();
            long f = fib(n);
            return Result.perOp(f, System.nanoTime() - t0, 1, "ms");
        });
    }

    private static long fib(int n) throws InterruptedException {
        if (n <= 2) return 1;
        ArrayBlockingQueue<Long> c = new ArrayBlockingQueue<>(1);
        Thread.startVirtualThread(() -> {
            try {
                c.put(fib(n - 1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        long y = fib(n - 2);
        return c.take() + y;
    }

    @Override
    public Result timers(long n, long sleeps) throws Exception {
        return inVirtualThread(() -> {
            AtomicLong count = new AtomicLong(), lateSum = new AtomicLong(), lateMax = new AtomicLong(), early = new AtomicLong();
            CountDownLatch done = new CountDownLatch((int) n);
            long t0 = System.nanoTime();
            for (long i = 0; i < n; i++) {
                long id = i;
                Thread.startVirtualThread(() -> {
                    long mySum = 0, myMax = 0, myEarly = 0;
                    try {
                        for (long j = 0; j < sleeps; j++) {
                            long d = BenchWorkload.sleepMillis(id, j) * 1_000_000;
                            long s = System.nanoTime();
                            Thread.sleep(d / 1_000_000);
                            long late = System.nanoTime() - s - d;
                            if (late < 0) myEarly++;
                            mySum += Math.max(0, late);
                            myMax = Math.max(myMax, late);
                        }
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    count.addAndGet(sleeps);
                    lateSum.addAndGet(mySum);
                    lateMax.accumulateAndGet(myMax, Math::max);
                    early.addAndGet(myEarly);
                    done.countDown();
                });
            }
            done.await();
            return Measures.timers(count.get(), System.nanoTime() - t0, lateSum.get(), lateMax.get(), early.get());
        });
    }

    @Override
    public Result hog(long millis) throws Exception {
        return inVirtualThread(() -> {
            HogState st = new HogState();
            CountDownLatch done = new CountDownLatch(2);
            long[] gaps = new long[(int) (millis * 2 + 16)];
            int gapCount = 0;
            // The ticker is "created" before the hogs start: starvation before its first tick counts.
            long prev = System.nanoTime(), next = prev + BenchWorkload.HOG_TICK_NANOS;
            for (int h = 0; h < 2; h++) {
                int hog = h;
                Thread.startVirtualThread(() -> {
                    st.iterations[hog] = HogState.spin(st);
                    done.countDown();
                });
            }
            Measures.hogStopper(millis, () -> st.stop = true);
            // The main virtual thread is the ticker: fixed rate like Go's, sleeping to the next period.
            while (true) {
                long now;
                while ((now = System.nanoTime()) < next) LockSupport.parkNanos(next - now);
                if (gapCount < gaps.length) gaps[gapCount++] = now - prev;
                prev = now;
                if (st.stop) break;
                do next += BenchWorkload.HOG_TICK_NANOS; while (next <= now);   // drop missed ticks, keep the phase
            }
            done.await();
            return Measures.hog(millis, gaps, gapCount, st.iterations[0], st.iterations[1]);
        });
    }

    @Override
    public Result select(long n) throws Exception {
        return inVirtualThread(() -> {
            // The JDK has no select: a counting semaphore says "some channel has a sender", and
            // the receiver polls the four queues from a random start (Go's uniform choice).
            int parties = BenchWorkload.PARALLEL_PARTIES;
            long per = n / parties;
            @SuppressWarnings("unchecked")
            SynchronousQueue<Long>[] chans = new SynchronousQueue[parties];
            for (int k = 0; k < parties; k++) chans[k] = new SynchronousQueue<>();
            Semaphore ready = new Semaphore(0);
            long t0 = System.nanoTime();
            for (int k = 0; k < parties; k++) {
                SynchronousQueue<Long> ch = chans[k];
                long base = k * per;
                Thread.startVirtualThread(() -> {
                    try {
                        for (long i = 0; i < per; i++) {
                            ready.release();
                            ch.put(base + i);
                        }
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            long sum = 0, total = per * parties;
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (long i = 0; i < total; i++) {
                ready.acquire();
                Long v = null;
                while (v == null) {
                    int start = rnd.nextInt(parties);
                    for (int k = 0; k < parties && v == null; k++) v = chans[(start + k) % parties].poll();
                    // A sender released before entering put: let it run.
                    if (v == null) Thread.yield();
                }
                sum += v;
            }
            return Result.perOp(sum, System.nanoTime() - t0, total, "ns_op");
        });
    }

    @Override
    public Result gosched(long n) throws Exception {
        return inVirtualThread(() -> {
            AtomicLong yields = new AtomicLong();
            CountDownLatch done = new CountDownLatch(2);
            long t0 = System.nanoTime();
            for (int g = 0; g < 2; g++) {
                Thread.startVirtualThread(() -> {
                    for (long i = 0; i < n; i++) Thread.yield();
                    yields.addAndGet(n);
                    done.countDown();
                });
            }
            done.await();
            return Result.perOp(yields.get(), System.nanoTime() - t0, n, "ns_op");
        });
    }

    /**
     * Each virtual thread blocked in {@link SynchronousQueue#take()}: the JDK's unbuffered
     * channel, the same structure this peer uses for every unbuffered channel.
     */
    @Override
    public Result parked(long n, long warmup) throws Exception {
        return inVirtualThread(() -> Measures.parkedRun(n, warmup, VirtualThreadPeer::parkAll));
    }

    private static long parkAll(long n, Runnable whileParked) throws InterruptedException {
        @SuppressWarnings("unchecked")
        SynchronousQueue<Long>[] chans = new SynchronousQueue[(int) n];
        AtomicLong sum = new AtomicLong();
        CountDownLatch ready = new CountDownLatch((int) n), done = new CountDownLatch((int) n);
        for (int i = 0; i < n; i++) {
            SynchronousQueue<Long> c = new SynchronousQueue<>();
            chans[i] = c;
            Thread.startVirtualThread(() -> {
                ready.countDown();
                try {
                    sum.addAndGet(c.take());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                done.countDown();
            });
        }
        ready.await();
        Thread.sleep(50);   // the last to count down are a few instructions from parking
        whileParked.run();
        for (int i = 0; i < n; i++) chans[i].put((long) i);
        done.await();
        return sum.get();
    }

    /**
     * The receiver is a virtual thread in {@link SynchronousQueue#take()}; the platform thread
     * offers (non-blocking: it succeeds only when a taker waits, like a send to a parked
     * receiver), and an offer that finds no taker is tried again after another gap.
     */
    @Override
    public Result wakeup(long n) throws Exception {
        return inVirtualThread(() -> {
            SynchronousQueue<Long> ch = new SynchronousQueue<>();
            long[] latency = new long[(int) n];
            AtomicLong received = new AtomicLong();
            Thread receiver = Thread.startVirtualThread(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        long sent = ch.take();
                        latency[i] = System.nanoTime() - sent;
                        received.set(i + 1);
                    }
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            long[] missed = new long[1];
            Thread sender = Thread.ofPlatform().name("wakeup-sender").start(() ->
                    missed[0] = Measures.driveWakeups(n, received::get, ch::offer, true));
            receiver.join();   // the main virtual thread unmounts too: every carrier is idle between sends
            sender.join();
            return Measures.wakeup(latency, (int) n, missed[0]);
        });
    }
}
