package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Async cancellation stress: platform threads keep many sendAsync/recvAsync futures in flight and
 * cancel them at random while goroutines send and receive on the same channel with blocking calls and
 * selects. A successful cancel must mean the value was not delivered (the sender re-sends it) or not
 * taken; a failed cancel means the result stands. Every value must arrive exactly once.
 */
class ChanAsyncCancelStressTest {

    @ParameterizedTest(name = "cap={0}")
    @ValueSource(ints = {0, 1, 10})
    void everyValueArrivesExactlyOnceWhileFuturesAreCancelledAtRandom(int cap) throws Exception {
        int asyncValues = 5000 * STRESS;   // sent through sendAsync by platform threads
        int goValues = 5000 * STRESS;      // sent by goroutines
        int total = asyncValues + goValues;
        Chan<Integer> c = Chan.make(cap);
        ConcurrentHashMap<Integer, Integer> seen = new ConcurrentHashMap<>();
        AtomicInteger received = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicLong cancelledSends = new AtomicLong();
        AtomicLong cancelledRecvs = new AtomicLong();
        AtomicInteger failedSends = new AtomicInteger();
        AtomicBoolean giveUp = new AtomicBoolean();

        java.util.function.IntConsumer record = v -> {
            if (seen.merge(v, 1, Integer::sum) > 1) {
                duplicates.incrementAndGet();
            }
            received.incrementAndGet();
        };

        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).randomizeScheduling(true).build())) {
            // Goroutine senders: blocking sends and selects.
            int goSenders = 4;
            for (int g = 0; g < goSenders; g++) {
                int gg = g;
                rt.go(() -> {
                    for (int v = asyncValues + gg; v < total; v += goSenders) {
                        if (v % 2 == 0) {
                            c.send(v);
                        } else {
                            Select.select(Select.send(c, v));
                        }
                    }
                });
            }
            // Goroutine receivers: blocking receives until close.
            for (int g = 0; g < 2; g++) {
                rt.go(() -> {
                    for (;;) {
                        Received<Integer> r = c.recv2();
                        if (!r.ok()) {
                            return;
                        }
                        record.accept(r.value());
                    }
                });
            }
            // Platform-thread async senders: keep up to 16 sends in flight, cancel at random, re-send cancelled ones.
            List<Thread> threads = new ArrayList<>();
            int asyncSenders = 2;
            for (int t = 0; t < asyncSenders; t++) {
                int tt = t;
                threads.add(Thread.ofPlatform().daemon(true).start(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    List<int[]> values = new ArrayList<>();
                    List<CompletableFuture<Void>> inflight = new ArrayList<>();
                    int next = tt;
                    while ((next < asyncValues || !inflight.isEmpty()) && !giveUp.get()) {
                        while (next < asyncValues && inflight.size() < 16) {
                            inflight.add(c.sendAsync(next));
                            values.add(new int[] {next});
                            next += asyncSenders;
                        }
                        for (int i = inflight.size() - 1; i >= 0; i--) {
                            CompletableFuture<Void> f = inflight.get(i);
                            if (f.isDone()) {
                                if (f.isCompletedExceptionally()) {
                                    failedSends.incrementAndGet();
                                }
                                inflight.remove(i);
                                values.remove(i);
                            } else if (rnd.nextInt(4) == 0 && f.cancel(false)) {
                                cancelledSends.incrementAndGet();
                                inflight.set(i, c.sendAsync(values.get(i)[0])); // not delivered: send again
                            }
                        }
                        Thread.onSpinWait();
                    }
                }));
            }
            // Platform-thread async receivers: up to 8 receives in flight, cancel at random.
            for (int t = 0; t < 2; t++) {
                threads.add(Thread.ofPlatform().daemon(true).start(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    List<CompletableFuture<Received<Integer>>> inflight = new ArrayList<>();
                    for (;;) {
                        while (inflight.size() < 8) {
                            inflight.add(c.recvAsync());
                        }
                        boolean closed = false;
                        for (int i = inflight.size() - 1; i >= 0; i--) {
                            CompletableFuture<Received<Integer>> f = inflight.get(i);
                            if (f.isDone()) {
                                Received<Integer> r = f.join();
                                if (r.ok()) {
                                    record.accept(r.value());
                                } else {
                                    closed = true;
                                }
                                inflight.remove(i);
                            } else if (rnd.nextInt(4) == 0) {
                                if (f.cancel(false)) {
                                    cancelledRecvs.incrementAndGet();
                                    inflight.remove(i);
                                } // else: a sender claimed it; it completes with its value shortly
                            }
                        }
                        if (giveUp.get()) {
                            return;
                        }
                        if (closed) {
                            // Drain what is still in flight: each ends with a value or "closed".
                            for (CompletableFuture<Received<Integer>> f : inflight) {
                                Received<Integer> r = f.join();
                                if (r.ok()) {
                                    record.accept(r.value());
                                }
                            }
                            return;
                        }
                        Thread.onSpinWait();
                    }
                }));
            }

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (received.get() < total && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            if (received.get() < total) {
                giveUp.set(true); // let the worker threads end; the assertion below reports the loss
            }
            c.close(); // also ends the goroutines blocked in recv2 (and any sender left, with an exception)
            assertThat(received.get()).as("cap=%d: values received by the deadline (more: duplicates; fewer: lost)", cap).isEqualTo(total);
            for (Thread t : threads) {
                t.join(10_000);
                assertThat(t.isAlive()).as("cap=%d: worker thread ended", cap).isFalse();
            }
        }
        assertThat(duplicates.get()).as("cap=%d: values delivered twice", cap).isZero();
        assertThat(failedSends.get()).as("cap=%d: async sends failed", cap).isZero();
        assertThat(received.get()).as("cap=%d: values received in all", cap).isEqualTo(total);
        assertThat(seen).as("cap=%d: distinct values", cap).hasSize(total);
        assertThat(cancelledSends.get()).as("cap=%d: some sends were cancelled (else the test tests nothing)", cap).isPositive();
        assertThat(cancelledRecvs.get()).as("cap=%d: some receives were cancelled", cap).isPositive();
    }
}
