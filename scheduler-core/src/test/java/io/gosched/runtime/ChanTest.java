package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.await;
import static io.gosched.runtime.GoTesting.runGo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Ports of Go's runtime/chan_test.go, under Go's names, asserting what they assert (counts and
 * ratios, not wall-clock times). Goroutine tests run on their own runtime.
 */
class ChanTest {

    /** Go: TestChan. Caps 0..19 by default (Go's -short), 0..199 with -Dgosched.stress>=10. */
    @Test
    void testChan() throws Exception {
        int maxCap = STRESS >= 10 ? 200 : 20;
        runGo(4, () -> {
            for (int chanCap = 0; chanCap < maxCap; chanCap++) {
                int cap = chanCap;
                {
                    // Ensure that receive from empty chan blocks.
                    Chan<Integer> c = Chan.make(cap);
                    AtomicBoolean recv1 = new AtomicBoolean();
                    AtomicBoolean recv2 = new AtomicBoolean();
                    Go.go(() -> {
                        c.recv();
                        recv1.set(true);
                    });
                    Go.go(() -> {
                        c.recv2();
                        recv2.set(true);
                    });
                    Go.sleep(Duration.ofMillis(1));
                    assertThat(recv1.get() || recv2.get()).as("chan[%d]: receive from empty chan", cap).isFalse();
                    // Ensure that non-blocking receive does not block.
                    assertThat(Select.trySelect(Select.recv(c)).index()).as("chan[%d]: receive from empty chan", cap).isEqualTo(-1);
                    assertThat(c.tryRecv()).as("chan[%d]: receive from empty chan", cap).isNull();
                    c.send(0);
                    c.send(0);
                }
                {
                    // Ensure that send to full chan blocks.
                    Chan<Integer> c = Chan.make(cap);
                    for (int i = 0; i < cap; i++) {
                        c.send(i);
                    }
                    AtomicBoolean sent = new AtomicBoolean();
                    Go.go(() -> {
                        c.send(0);
                        sent.set(true);
                    });
                    Go.sleep(Duration.ofMillis(1));
                    assertThat(sent.get()).as("chan[%d]: send to full chan", cap).isFalse();
                    // Ensure that non-blocking send does not block.
                    assertThat(Select.trySelect(Select.send(c, 0)).index()).as("chan[%d]: send to full chan", cap).isEqualTo(-1);
                    c.recv();
                }
                {
                    // Ensure that we receive 0 (here: null) from closed chan.
                    Chan<Integer> c = Chan.make(cap);
                    for (int i = 0; i < cap; i++) {
                        c.send(i);
                    }
                    c.close();
                    for (int i = 0; i < cap; i++) {
                        assertThat(c.recv()).as("chan[%d]: received", cap).isEqualTo(i);
                    }
                    assertThat(c.recv()).as("chan[%d]: received", cap).isNull();
                    assertThat(c.recv2().ok()).as("chan[%d]: received ok", cap).isFalse();
                }
                {
                    // Ensure that close unblocks receive.
                    Chan<Integer> c = Chan.make(cap);
                    Chan<Boolean> done = Chan.make();
                    Go.go(() -> {
                        Received<Integer> r = c.recv2();
                        done.send(r.value() == null && !r.ok());
                    });
                    Go.sleep(Duration.ofMillis(1));
                    c.close();
                    assertThat(done.recv()).as("chan[%d]: received non zero from closed chan", cap).isTrue();
                }
                {
                    // Send 100 integers, ensure that we receive them non-corrupted in FIFO order.
                    Chan<Integer> c = Chan.make(cap);
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        assertThat(c.recv()).as("chan[%d]: received", cap).isEqualTo(i);
                    }
                    // Same, but using recv2.
                    Go.go(() -> {
                        for (int i = 0; i < 100; i++) {
                            c.send(i);
                        }
                    });
                    for (int i = 0; i < 100; i++) {
                        Received<Integer> r = c.recv2();
                        assertThat(r.ok()).as("chan[%d]: receive failed, expected %d", cap, i).isTrue();
                        assertThat(r.value()).as("chan[%d]: received", cap).isEqualTo(i);
                    }
                }
                {
                    // Send 1000 integers in 4 goroutines, ensure that we receive what we send.
                    int p = 4;
                    int l = 1000;
                    Chan<Integer> c = Chan.make(cap);
                    for (int k = 0; k < p; k++) {
                        Go.go(() -> {
                            for (int i = 0; i < l; i++) {
                                c.send(i);
                            }
                        });
                    }
                    Chan<Map<Integer, Integer>> done = Chan.make();
                    for (int k = 0; k < p; k++) {
                        Go.go(() -> {
                            Map<Integer, Integer> recv = new HashMap<>();
                            for (int i = 0; i < l; i++) {
                                recv.merge(c.recv(), 1, Integer::sum);
                            }
                            done.send(recv);
                        });
                    }
                    Map<Integer, Integer> recv = new HashMap<>();
                    for (int k = 0; k < p; k++) {
                        done.recv().forEach((key, v) -> recv.merge(key, v, Integer::sum));
                    }
                    assertThat(recv).as("chan[%d]: received %d values, expected %d", cap, recv.size(), l).hasSize(l);
                    assertThat(recv.values()).as("chan[%d]: each value received %d times", cap, p).allMatch(v -> v == p);
                }
                {
                    // Test len/cap.
                    Chan<Integer> c = Chan.make(cap);
                    assertThat(c.len()).as("chan[%d]: bad len", cap).isZero();
                    assertThat(c.cap()).as("chan[%d]: bad cap", cap).isEqualTo(cap);
                    for (int i = 0; i < cap; i++) {
                        c.send(i);
                    }
                    assertThat(c.len()).as("chan[%d]: bad len", cap).isEqualTo(cap);
                    assertThat(c.cap()).as("chan[%d]: bad cap", cap).isEqualTo(cap);
                }
            }
        });
    }

    /** Go: TestNonblockRecvRace. A non-blocking receive racing with close must never take default. */
    @Test
    void testNonblockRecvRace() throws Exception {
        int n = 2000 * STRESS;
        AtomicInteger notReady = new AtomicInteger();
        runGo(4, () -> {
            Chan<Boolean> finished = Chan.make(n);
            for (int i = 0; i < n; i++) {
                Chan<Integer> c = Chan.make(1);
                c.send(1);
                Go.go(() -> {
                    if (Select.trySelect(Select.recv(c)).index() == -1) {
                        notReady.incrementAndGet(); // chan is not ready
                    }
                    finished.send(true);
                });
                c.close();
                c.recv();
            }
            for (int i = 0; i < n; i++) {
                finished.recv();
            }
        });
        assertThat(notReady.get()).as("non-blocking receives that found the chan not ready").isZero();
    }

    /** Go: TestNonblockSelectRace. Select with two receive cases must not take default while one is ready. */
    @Test
    void testNonblockSelectRace() throws Exception {
        int n = 2000 * STRESS;
        runGo(4, () -> {
            Chan<Boolean> done = Chan.make(1);
            for (int i = 0; i < n; i++) {
                Chan<Integer> c1 = Chan.make(1);
                Chan<Integer> c2 = Chan.make(1);
                c1.send(1);
                Go.go(() -> {
                    Selected s = Select.trySelect(Select.recv(c1), Select.recv(c2));
                    done.send(s.index() != -1);
                });
                c2.send(1);
                Select.trySelect(Select.recv(c1));
                assertThat(done.recv()).as("no chan is ready (iteration %d)", i).isTrue();
            }
        });
    }

    /** Go: TestNonblockSelectRace2. Same, readiness through close. */
    @Test
    void testNonblockSelectRace2() throws Exception {
        int n = 2000 * STRESS;
        runGo(4, () -> {
            Chan<Boolean> done = Chan.make(1);
            for (int i = 0; i < n; i++) {
                Chan<Integer> c1 = Chan.make(1);
                Chan<Integer> c2 = Chan.make();
                c1.send(1);
                Go.go(() -> {
                    Selected s = Select.trySelect(Select.recv(c1), Select.recv(c2));
                    done.send(s.index() != -1);
                });
                c2.close();
                Select.trySelect(Select.recv(c1));
                assertThat(done.recv()).as("no chan is ready (iteration %d)", i).isTrue();
            }
        });
    }

    /** Go: TestSelfSelect. A select sending and receiving on one chan must not deadlock nor receive its own value. */
    @Test
    void testSelfSelect() throws Exception {
        AtomicInteger selfReceives = new AtomicInteger();
        runGo(2, () -> {
            for (int chanCap : new int[] {0, 10}) {
                Chan<Integer> c = Chan.make(chanCap);
                Chan<Boolean> wg = Chan.make(2);
                for (int p = 0; p < 2; p++) {
                    int pp = p;
                    Go.go(() -> {
                        for (int i = 0; i < 1000 * STRESS; i++) {
                            Selected s;
                            boolean sendFirst = pp == 0 || i % 2 == 0;
                            if (sendFirst) {
                                s = Select.select(Select.send(c, pp), Select.recv(c));
                            } else {
                                s = Select.select(Select.recv(c), Select.send(c, pp));
                            }
                            boolean received = s.index() == (sendFirst ? 1 : 0);
                            if (received && chanCap == 0 && (Integer) s.value() == pp) {
                                selfReceives.incrementAndGet();
                            }
                        }
                        wg.send(true);
                    });
                }
                wg.recv();
                wg.recv();
            }
        });
        assertThat(selfReceives.get()).as("self receives on an unbuffered chan").isZero();
    }

    /** Go: TestSelectStress. Chaotic sends, receives and selects over four chans must not deadlock. */
    @Test
    void testSelectStress() throws Exception {
        int n = 2000 * STRESS;
        runGo(10, () -> {
            @SuppressWarnings("unchecked")
            Chan<Integer>[] c = new Chan[] {Chan.make(), Chan.make(), Chan.make(2), Chan.make(3)};
            Chan<Boolean> wg = Chan.make(10);
            for (int k = 0; k < 4; k++) {
                int kk = k;
                Go.go(() -> {
                    for (int i = 0; i < n; i++) {
                        c[kk].send(0);
                    }
                    wg.send(true);
                });
                Go.go(() -> {
                    for (int i = 0; i < n; i++) {
                        c[kk].recv();
                    }
                    wg.send(true);
                });
            }
            Go.go(() -> {
                int[] cnt = new int[4];
                Chan<Integer>[] c1 = c.clone();
                for (int i = 0; i < 4 * n; i++) {
                    Selected s = Select.select(Select.send(c1[3], 0), Select.send(c1[2], 0),
                            Select.send(c1[0], 0), Select.send(c1[1], 0));
                    int k = new int[] {3, 2, 0, 1}[s.index()];
                    if (++cnt[k] == n) {
                        c1[k] = null;
                    }
                }
                wg.send(true);
            });
            Go.go(() -> {
                int[] cnt = new int[4];
                Chan<Integer>[] c1 = c.clone();
                for (int i = 0; i < 4 * n; i++) {
                    Selected s = Select.select(Select.recv(c1[0]), Select.recv(c1[1]),
                            Select.recv(c1[2]), Select.recv(c1[3]));
                    if (++cnt[s.index()] == n) {
                        c1[s.index()] = null;
                    }
                }
                wg.send(true);
            });
            for (int i = 0; i < 10; i++) {
                wg.recv();
            }
        });
    }

    /** Go: TestSelectFairness. The choice among ready cases must be uniform (within ~9 sigma). */
    @Test
    void testSelectFairness() throws Exception {
        int trials = 10000;
        int[] cnt = new int[3];
        runGo(2, () -> {
            Chan<Integer> c1 = Chan.make(trials + 1);
            Chan<Integer> c2 = Chan.make(trials + 1);
            for (int i = 0; i < trials + 1; i++) {
                c1.send(1);
                c2.send(2);
            }
            Chan<Integer> c3 = Chan.make();
            Chan<Integer> c4 = Chan.make();
            Chan<Integer> out = Chan.make();
            Chan<Integer> done = Chan.make();
            Chan<Boolean> wg = Chan.make(1);
            Go.go(() -> {
                for (;;) {
                    Selected s = Select.select(Select.recv(c3), Select.recv(c4), Select.recv(c1), Select.recv(c2));
                    Integer b = s.valueAs();
                    if (Select.select(Select.send(out, b), Select.recv(done)).index() == 1) {
                        wg.send(true);
                        return;
                    }
                }
            });
            for (int i = 0; i < trials; i++) {
                int b = out.recv();
                cnt[b == 1 || b == 2 ? b : 0]++;
            }
            done.close();
            wg.recv();
        });
        assertThat(cnt[0]).as("unexpected values on channel").isZero();
        // If the select in the goroutine is fair, cnt1 and cnt2 should be about the same value.
        double r = (double) cnt[1] / trials;
        double e = Math.abs(r - 0.5);
        assertThat(e).as("unfair select: in %d trials, results were %d, %d", trials, cnt[1], cnt[2])
                .isLessThanOrEqualTo(4.5 / Math.sqrt(trials));
    }

    /** Go: TestPseudoRandomSend. Two send cases on one chan: each must be chosen more than 10% of the time. */
    @Test
    void testPseudoRandomSend() throws Exception {
        int n = 100;
        runGo(2, () -> {
            for (int chanCap : new int[] {0, n}) {
                Chan<Integer> c = Chan.make(chanCap);
                int[] l = new int[n];
                Chan<Boolean> m = Chan.make();
                Go.go(() -> {
                    for (int i = 0; i < n; i++) {
                        Go.yield();
                        l[i] = c.recv();
                    }
                    m.send(true);
                });
                for (int i = 0; i < n; i++) {
                    Select.select(Select.send(c, 1), Select.send(c, 0));
                }
                m.recv(); // wait
                int n0 = 0;
                int n1 = 0;
                for (int i : l) {
                    n0 += (i + 1) % 2;
                    n1 += i;
                }
                assertThat(n0).as("cap=%d: want pseudorandom, got %d zeros and %d ones", chanCap, n0, n1).isGreaterThan(n / 10);
                assertThat(n1).as("cap=%d: want pseudorandom, got %d zeros and %d ones", chanCap, n0, n1).isGreaterThan(n / 10);
            }
        });
    }

    /** Go: TestMultiConsumer. 23 workers ranging over one chan; count and sum must match. */
    @Test
    void testMultiConsumer() throws Exception {
        int nwork = 23;
        int niter = 27183 * STRESS; // Go: 271828
        int[] pn = {2, 3, 7, 11, 13, 17, 19, 23, 27, 31};
        long[] result = new long[3];
        runGo(4, () -> {
            Chan<Integer> q = Chan.make(nwork * 3);
            Chan<Integer> r = Chan.make(nwork * 3);
            Chan<Boolean> wg = Chan.make(nwork);
            for (int i = 0; i < nwork; i++) {
                int w = i;
                Go.go(() -> {
                    for (int v : q) {
                        // mess with the fifo-ish nature of range
                        if (pn[w % pn.length] == v) {
                            Go.yield();
                        }
                        r.send(v);
                    }
                    wg.send(true);
                });
            }
            Go.go(() -> { // feeder & closer
                long expect = 0;
                for (int i = 0; i < niter; i++) {
                    int v = pn[i % pn.length];
                    expect += v;
                    q.send(v);
                }
                result[2] = expect;
                q.close(); // no more work
                for (int i = 0; i < nwork; i++) {
                    wg.recv(); // workers done
                }
                r.close(); // ... so there can be no more results
            });
            for (int v : r) { // consume & check
                result[0]++;
                result[1] += v;
            }
        });
        assertThat(result[0]).as("expected %d iterations", niter).isEqualTo(niter);
        assertThat(result[1]).as("sum of received values").isEqualTo(result[2]);
    }

    /** Go: TestSelectDuplicateChannel. A select's cleanup on a duplicated chan must not corrupt its queue. */
    @Test
    void testSelectDuplicateChannel() throws Exception {
        runGo(2, () -> {
            Chan<Integer> c = Chan.make();
            Chan<Integer> d = Chan.make();
            Chan<Integer> e = Chan.make();
            Go.go(() -> { // goroutine A
                Select.select(Select.recv(c), Select.recv(c), Select.recv(d));
                e.send(9);
            });
            await("A queued twice on c", () -> c.waitingReceivers() == 2); // A gets queued first on c
            AtomicReference<Integer> got = new AtomicReference<>();
            Chan<Boolean> bDone = Chan.make(1);
            Go.go(() -> { // goroutine B
                got.set(c.recv());
                bDone.send(true);
            });
            await("B queued on c", () -> c.waitingReceivers() == 3);
            d.send(7); // wake up A, it dequeues itself from c. This operation used to corrupt c.recvq.
            e.recv(); // A tells us it's done
            assertThat(c.waitingReceivers()).as("only B left on c").isEqualTo(1);
            c.send(8); // wake up B. This used to fail because c.recvq was corrupted.
            bDone.recv();
            assertThat(got.get()).isEqualTo(8);
        });
    }

    /** Go: TestChanSendInterface, with heterogeneous values: non-blocking select sends, two send cases. */
    @Test
    void testChanSendInterface() throws Exception {
        runGo(1, () -> {
            Object m = new Object();
            Chan<Object> c = Chan.make(1);
            c.send(m);
            assertThat(Select.trySelect(Select.send(c, m)).index()).isEqualTo(-1);
            assertThat(Select.trySelect(Select.send(c, m), Select.send(c, "other")).index()).isEqualTo(-1);
            assertThat(c.recv()).isSameAs(m);
            Selected s = Select.trySelect(Select.send(c, 42L), Select.send(c, "x"));
            assertThat(s.index()).isIn(0, 1);
            assertThat(c.recv()).isEqualTo(s.index() == 0 ? (Object) 42L : "x");
        });
    }

    /** Select on closed channels: a closed recv case is ready (ok=false) after its buffer drains; a closed send case throws. */
    @Test
    void selectOnClosedChannels() throws Exception {
        runGo(2, () -> {
            Chan<Integer> open = Chan.make();
            Chan<Integer> closed = Chan.make(2);
            closed.send(1);
            closed.send(2);
            closed.close();
            assertThat(Select.select(Select.recv(open), Select.recv(closed))).isEqualTo(new Selected(1, 1, true));
            assertThat(Select.select(Select.recv(closed), Select.recv(open))).isEqualTo(new Selected(0, 2, true));
            for (int i = 0; i < 100; i++) {
                assertThat(Select.select(Select.recv(open), Select.recv(closed))).isEqualTo(new Selected(1, null, false));
            }
            assertThatThrownBy(() -> Select.select(Select.recv(open), Select.send(closed, 3)))
                    .isInstanceOf(ChanClosedException.class).hasMessage("send on closed channel");

            // Closed while the select waits: a receive case wakes with ok=false, a send case throws.
            Chan<Integer> a = Chan.make();
            Chan<Integer> b = Chan.make();
            Chan<Selected> res = Chan.make(1);
            Go.go(() -> res.send(Select.select(Select.recv(a), Select.recv(b))));
            await("select queued", () -> a.waitingReceivers() == 1 && b.waitingReceivers() == 1);
            b.close();
            assertThat(res.recv()).isEqualTo(new Selected(1, null, false));
            assertThat(a.waitingReceivers()).as("loser case dequeued").isZero();

            Chan<Integer> s = Chan.make();
            Chan<Throwable> err = Chan.make(1);
            Go.go(() -> {
                try {
                    Select.select(Select.send(s, 1), Select.recv(a));
                    err.send(new AssertionError("select returned"));
                } catch (ChanClosedException ex) {
                    err.send(ex);
                }
            });
            await("select queued", () -> s.waitingSenders() == 1);
            s.close();
            assertThat(err.recv()).isInstanceOf(ChanClosedException.class);
            assertThat(a.waitingReceivers()).as("loser case dequeued").isZero();
        });
    }

    /** Only nil channels: trySelect takes default; an empty trySelect too. */
    @Test
    void selectWithOnlyNilChannels() {
        assertThat(Select.trySelect(Select.recv((Chan<Integer>) null), Select.send((Chan<Integer>) null, 1)).index()).isEqualTo(-1);
        assertThat(Select.trySelect().index()).isEqualTo(-1);
    }

    /**
     * A plain send or receive releases the channel lock before its goroutine yields (Chan, "Early
     * release"), so a waker often dequeues a partner that is still on its way into the park and
     * must hand it back to its own M instead of a run queue. Four senders and four receivers on
     * an unbuffered channel and four Ps hit that window thousands of times a run: every value must
     * arrive exactly once, no goroutine may die, and none may be left parked.
     */
    @Test
    void unbufferedHandOffsWhileThePartnerIsStillParking() throws Exception {
        int parties = 4;
        int per = 50_000 * STRESS;
        List<Throwable> uncaught = new CopyOnWriteArrayList<>();
        AtomicLong received = new AtomicLong();
        AtomicLong sum = new AtomicLong();
        CountDownLatch consumersDone = new CountDownLatch(parties);
        SchedulerConfig config = SchedulerConfig.builder().gomaxprocs(4)
                .onUncaughtException((thread, e) -> uncaught.add(e)).build();
        try (GoRuntime rt = GoRuntime.start(config)) {
            Chan<Integer> ch = Chan.make();
            CountDownLatch producersDone = new CountDownLatch(parties);
            for (int c = 0; c < parties; c++) {
                rt.go(() -> {
                    long n = 0;
                    long s = 0;
                    for (Integer v; (v = ch.recv()) != null; ) {
                        n++;
                        s += v;
                    }
                    received.addAndGet(n);
                    sum.addAndGet(s);
                    consumersDone.countDown();
                });
            }
            for (int p = 0; p < parties; p++) {
                int base = p * per;
                rt.go(() -> {
                    for (int i = 0; i < per; i++) {
                        ch.send(base + i);
                    }
                    producersDone.countDown();
                });
            }
            assertThat(producersDone.await(60, TimeUnit.SECONDS)).as("every send completed").isTrue();
            ch.close();
            assertThat(consumersDone.await(30, TimeUnit.SECONDS)).as("every receiver saw the close").isTrue();
        }
        assertThat(uncaught).as("goroutines that died").isEmpty();
        long n = (long) parties * per;
        assertThat(received.get()).isEqualTo(n);
        assertThat(sum.get()).isEqualTo(n * (n - 1) / 2);
    }

    /** Platform threads and goroutines meet on the same channels, both directions, through select too. */
    @Test
    void platformThreadsAndGoroutinesShareChannels() throws Exception {
        Chan<Integer> toGo = Chan.make();
        Chan<Integer> fromGo = Chan.make();
        int n = 2000 * STRESS;
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            rt.go(() -> {
                for (int i = 0; i < n; i++) {
                    Selected s = Select.select(Select.recv(toGo));
                    fromGo.send((Integer) s.value() + 1);
                }
            });
            for (int i = 0; i < n; i++) {
                toGo.send(i);
                assertThat(Select.select(Select.recv(fromGo)).value()).isEqualTo(i + 1);
            }
        }
    }

    /**
     * close() racing with a pinned receiver that queued its sudog, could not park (inside
     * Go.procPin) and withdraws it. close collects its waiters on a list of its own: linking
     * them through the sudogs' queue links made the withdrawal misread a dequeued sudog as the
     * queue's head (the queue corrupted, a running G marked READIED, "goready: goroutine N is
     * dead" within 20-105 rounds, waitingReceivers() above 0 afterwards; here about 1 round in
     * 100-800 on the 2-core machine, so the test runs 1,500).
     */
    @Test
    void closeRacingWithAPinnedReceiverWithdrawing() throws Exception {
        int rounds = 1500 * STRESS;
        CopyOnWriteArrayList<Throwable> uncaught = new CopyOnWriteArrayList<>();
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2)
                .onUncaughtException((thread, t) -> uncaught.add(t)).shutdownTimeout(Duration.ofSeconds(2)).build())) {
            for (int r = 0; r < rounds && uncaught.isEmpty(); r++) {
                Chan<Integer> c = Chan.make();
                CountDownLatch done = new CountDownLatch(6);
                for (int k = 0; k < 3; k++) {
                    rt.go(() -> {
                        c.recv();
                        done.countDown();
                    });
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (c.waitingReceivers() < 3 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                AtomicInteger cycling = new AtomicInteger();
                for (int k = 0; k < 2; k++) {
                    rt.go(() -> {
                        // Queue, fail to park (pinned), withdraw: again and again until close
                        // lands in one of the windows between the queueing and the withdrawal.
                        cycling.incrementAndGet();
                        while (!c.isClosed()) {
                            Go.procPin();
                            try {
                                c.recv(); // null once closed (or taken by close while queued)
                            } catch (IllegalStateException pinned) {
                                // the park was refused and the waiter withdrawn
                            } finally {
                                Go.procUnpin();
                            }
                        }
                        Go.yield(); // a G wrongly left READIED by close dies here
                        done.countDown();
                    });
                }
                int delayNanos = 5_000 + (r % 50) * 2_000;
                Thread.ofPlatform().start(() -> { // a platform thread: truly concurrent with both Ps
                    while (cycling.get() < 2) {
                        Thread.onSpinWait();
                    }
                    long until = System.nanoTime() + delayNanos;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    c.close();
                    done.countDown();
                });
                assertThat(done.await(10, TimeUnit.SECONDS)).as("round %d finished; uncaught %s", r, uncaught).isTrue();
                assertThat(c.waitingReceivers()).as("round %d: receivers still queued on a closed channel", r).isZero();
            }
            assertThat(uncaught).isEmpty();
        }
    }
}
