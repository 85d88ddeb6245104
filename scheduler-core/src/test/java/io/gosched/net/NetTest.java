package io.gosched.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Goroutine-blocking sockets on the netpoller, loopback only. */
@Timeout(120)
class NetTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);
    static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    static GoRuntime runtime(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
    }

    /**
     * An echo server in goroutines with 1,000 concurrent client connections, each exchanging
     * many messages: every byte comes back, and the whole thing runs on a handful of threads
     * (2,000 goroutines blocked in reads at a time, no M blocked in any of them).
     */
    @Test
    void echoServerWithAThousandConnections() throws Exception {
        int conns = 1_000;
        int messages = 20 * STRESS;
        int size = 64;
        try (GoRuntime rt = runtime(2)) {
            Listener ln = Listener.listen(rt, LOOPBACK);
            InetSocketAddress addr = ln.address();
            rt.go(() -> {
                for (;;) {
                    Conn c;
                    try {
                        c = ln.accept();
                    } catch (IOException closed) {
                        return;
                    }
                    Go.go(() -> echo(c));
                }
            });
            AtomicLong echoed = new AtomicLong();
            AtomicInteger failures = new AtomicInteger();
            AtomicReference<Throwable> firstFailure = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(conns);
            AtomicInteger maxThreads = new AtomicInteger();
            for (int i = 0; i < conns; i++) {
                int id = i;
                rt.go(() -> {
                    try (Conn c = Conn.dial(addr)) {
                        ByteBuffer out = ByteBuffer.allocate(size);
                        ByteBuffer in = ByteBuffer.allocate(size);
                        for (int m = 0; m < messages; m++) {
                            out.clear();
                            for (int k = 0; k < size; k++) {
                                out.put((byte) (id + m + k));
                            }
                            out.flip();
                            c.write(out);
                            in.clear();
                            if (!c.readFully(in)) {
                                throw new IOException("early end of stream");
                            }
                            for (int k = 0; k < size; k++) {
                                if (in.get(k) != (byte) (id + m + k)) {
                                    throw new IOException("corrupt echo");
                                }
                            }
                            echoed.addAndGet(size);
                        }
                    } catch (Throwable t) {
                        failures.incrementAndGet();
                        firstFailure.compareAndSet(null, t);
                    } finally {
                        done.countDown();
                    }
                });
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!done.await(10, TimeUnit.MILLISECONDS) && System.nanoTime() < deadline) {
                maxThreads.accumulateAndGet(rt.stats().threads(), Math::max);
            }
            ln.close();
            assertEquals(0, done.getCount(), "clients not finished");
            assertEquals(0, failures.get(), () -> "failed clients, first: " + firstFailure.get());
            assertEquals((long) conns * messages * size, echoed.get());
            // Counted after the ready goroutines are injected: it may trail the wake-up a moment.
            io.gosched.runtime.GoTesting.await("netpollReady > 0", () -> rt.stats().netpollReady() > 0);
            // 2,000 goroutines block in reads at a time: on threads, that would be 2,000 Ms.
            assertThat(maxThreads.get()).as("Ms while 2,000 goroutines wait on sockets").isLessThanOrEqualTo(10);
        }
    }

    private static void echo(Conn c) {
        try (c) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            for (;;) {
                b.clear();
                if (c.read(b) < 0) {
                    return;
                }
                b.flip();
                c.write(b);
            }
        } catch (IOException e) {
            // client went away
        }
    }

    @Test
    void readDeadlineFiresAndCanBeMoved() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            rt.run(() -> {
                try (Listener ln = Listener.listen(LOOPBACK); Conn c = Conn.dial(ln.address()); Conn s = ln.accept()) {
                    long t0 = System.nanoTime();
                    c.setReadDeadline(Instant.now().plusMillis(50));
                    assertThrows(SocketTimeoutException.class, () -> c.read(ByteBuffer.allocate(1)));
                    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
                    // Still expired until moved.
                    assertThrows(SocketTimeoutException.class, () -> c.read(ByteBuffer.allocate(1)));
                    c.setReadDeadline(null);
                    s.write(new byte[] {42});
                    ByteBuffer b = ByteBuffer.allocate(1);
                    assertEquals(1, c.read(b));
                    assertEquals(42, b.get(0));
                    // A deadline in the past fails at once; one far away does not fire.
                    c.setReadDeadline(Instant.now().minusSeconds(1));
                    assertThrows(SocketTimeoutException.class, () -> c.read(ByteBuffer.allocate(1)));
                    c.setReadDeadline(Instant.now().plusSeconds(3600));
                    s.write(new byte[] {43});
                    b.clear();
                    assertEquals(1, c.read(b));
                }
                return null;
            });
        }
    }

    /**
     * Go's FD.Read and FD.Write check the deadline before they try (pollDesc.prepareRead,
     * prepareWrite: "a deadline is an absolute time after which I/O operations fail"): once the
     * read deadline has passed, a read fails even with data waiting, and a write fails with room
     * in the socket buffer, until the deadline is moved. The data is still there afterwards.
     */
    @Test
    void ioFailsOnceItsDeadlinePassedEvenWhenItWouldNotBlock() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            rt.run(() -> {
                try (Listener ln = Listener.listen(LOOPBACK); Conn c = Conn.dial(ln.address()); Conn s = ln.accept()) {
                    s.write(new byte[] {42});
                    Go.sleep(Duration.ofMillis(20)); // let the byte land in c's receive buffer
                    c.setReadDeadline(Instant.now().minusSeconds(1));
                    assertThrows(SocketTimeoutException.class, () -> c.read(ByteBuffer.allocate(1)), "a read after its deadline, data waiting");
                    c.setWriteDeadline(Instant.now().minusSeconds(1));
                    assertThrows(SocketTimeoutException.class, () -> c.write(new byte[] {1}), "a write after its deadline, room in the buffer");
                    c.setDeadline(null);
                    ByteBuffer b = ByteBuffer.allocate(1);
                    assertEquals(1, c.read(b));
                    assertEquals(42, b.get(0));
                    c.write(new byte[] {7});
                    b.clear();
                    assertEquals(1, s.read(b));
                    assertEquals(7, b.get(0), "the write refused by its deadline sent nothing");
                }
                return null;
            });
        }
    }

    /**
     * Go computes a deadline's delay against time.Now(), which inside a synctest bubble is the
     * bubble's clock (internal/poll setDeadlineImpl: time.Until(t)), and arms the poller's real
     * timer with it: conn.SetReadDeadline(time.Now().Add(30*time.Second)) in a bubble gives a
     * read 30 real seconds. A connection dialled in a bubble, with a deadline 30 s after
     * Time.now() there, must still read the byte a goroutine outside writes a little later.
     */
    @Test
    void aDeadlineSetInABubbleCountsFromTheBubblesClock() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            rt.run(() -> {
                try (Listener ln = Listener.listen(LOOPBACK)) {
                    Go.go(() -> { // outside the bubble
                        try (Conn s = ln.accept()) {
                            Go.sleep(Duration.ofMillis(50));
                            s.write(new byte[] {42});
                            s.read(ByteBuffer.allocate(1)); // until the bubble's side closes
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                    InetSocketAddress addr = ln.address();
                    io.gosched.testing.Synctest.test(() -> {
                        try (Conn c = Conn.dial(addr)) {
                            c.setReadDeadline(io.gosched.time.Time.now().plusSeconds(30));
                            ByteBuffer b = ByteBuffer.allocate(1);
                            assertEquals(1, c.read(b), "read within a deadline 30 s away on the bubble's clock");
                            assertEquals(42, b.get(0));
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    });
                }
                return null;
            });
        }
    }

    @Test
    void manyDeadlinesFireWhileOthersKeepWorking() throws Exception {
        int n = 200;
        try (GoRuntime rt = runtime(2)) {
            Listener ln = Listener.listen(rt, LOOPBACK);
            AtomicInteger timeouts = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(n);
            rt.go(() -> {
                for (int i = 0; i < n; i++) {
                    try {
                        Conn s = ln.accept();
                        Go.go(() -> echo(s));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            for (int i = 0; i < n; i++) {
                rt.go(() -> {
                    try (Conn c = Conn.dial(ln.address())) {
                        c.setReadDeadline(Instant.now().plusMillis(20));
                        c.read(ByteBuffer.allocate(1)); // nobody writes: must time out
                    } catch (SocketTimeoutException e) {
                        timeouts.incrementAndGet();
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            ln.close();
            assertEquals(n, timeouts.get());
        }
    }

    /**
     * Two threads set a connection's read deadline at the same moment (5 and 10 ms ahead): a
     * read must then time out. The deadline and its timer change together under the
     * descriptor's lock (Go's pd.lock); before, the late timer reset could win over the late
     * deadline, the surviving timer's fire was ignored as stale, and 2-3 reads in 200 never
     * timed out (a watchdog closes them here).
     */
    @Test
    void racingReadDeadlinesNeverLoseTheTimeout() throws Exception {
        int rounds = 200 * STRESS;
        try (GoRuntime rt = runtime(2); Listener ln = Listener.listen(rt, LOOPBACK)) {
            AtomicInteger lost = new AtomicInteger();
            AtomicInteger timedOut = new AtomicInteger();
            for (int r = 0; r < rounds; r++) {
                Conn c = Conn.dial(rt, ln.address());
                Conn s = rt.run(ln::accept);
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                Thread[] setters = new Thread[2];
                for (int k = 0; k < 2; k++) {
                    long ms = 5L * (k + 1);
                    setters[k] = Thread.ofPlatform().start(() -> {
                        try {
                            start.await();
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                        c.setReadDeadline(Instant.now().plusMillis(ms));
                    });
                }
                for (Thread t : setters) {
                    t.join();
                }
                Thread watchdog = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        Thread.sleep(2_000);
                        lost.incrementAndGet();
                        c.close();
                    } catch (InterruptedException e) {
                        // the read timed out in time
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                rt.run(() -> {
                    try {
                        c.read(ByteBuffer.allocate(1)); // nobody writes
                    } catch (SocketTimeoutException e) {
                        timedOut.incrementAndGet();
                    } catch (IOException e) {
                        // closed by the watchdog: counted as lost
                    }
                    return null;
                });
                watchdog.interrupt();
                watchdog.join();
                c.close();
                s.close();
            }
            assertThat(lost.get()).as("reads that never timed out, of %d", rounds).isZero();
            assertThat(timedOut.get()).isEqualTo(rounds);
        }
    }

    /**
     * Go: TestConcurrentSetDeadline (net/timeout_test.go, Go issue 35367): 8 goroutines set read
     * and write deadlines on the same 10 connections, steadily earlier, 100 times each; every
     * call returns. Then, beyond Go's test, each connection's last deadline still works: a read
     * with a 20 ms deadline times out instead of blocking.
     */
    @Test
    void testConcurrentSetDeadline() throws Exception {
        int goroutines = 8, conns = 10, tries = 100;
        try (GoRuntime rt = runtime(2); Listener ln = Listener.listen(rt, LOOPBACK)) {
            Conn[] c = new Conn[conns];
            Conn[] s = new Conn[conns];
            for (int i = 0; i < conns; i++) {
                c[i] = Conn.dial(rt, ln.address());
                s[i] = rt.run(ln::accept);
            }
            Instant now = Instant.now();
            rt.run(() -> {
                io.gosched.sync.WaitGroup wg = new io.gosched.sync.WaitGroup();
                wg.add(goroutines);
                for (int i = 0; i < goroutines; i++) {
                    int gi = i;
                    Go.go(() -> {
                        try {
                            for (int j = tries; j > 0; j--) {
                                for (int k = 0; k < conns; k++) {
                                    c[k].setReadDeadline(now.plus(Duration.ofHours(2)).plusSeconds((long) gi * j * k));
                                    c[k].setWriteDeadline(now.plus(Duration.ofHours(1)).plusSeconds((long) gi * j * k));
                                }
                            }
                        } finally {
                            wg.done();
                        }
                    });
                }
                wg.await();
                return null;
            });
            AtomicInteger timedOut = new AtomicInteger();
            for (int k = 0; k < conns; k++) {
                Conn ck = c[k];
                ck.setReadDeadline(Instant.now().plusMillis(20));
                rt.run(() -> {
                    try {
                        ck.read(ByteBuffer.allocate(1)); // nobody writes
                    } catch (SocketTimeoutException e) {
                        timedOut.incrementAndGet();
                    }
                    return null;
                });
            }
            assertThat(timedOut.get()).as("reads that timed out after the racing setters").isEqualTo(conns);
            for (int i = 0; i < conns; i++) {
                c[i].close();
                s[i].close();
            }
        }
    }

    @Test
    void closeWakesABlockedReaderAndABlockedAccept() throws Exception {
        try (GoRuntime rt = runtime(2)) {
            Listener ln = Listener.listen(rt, LOOPBACK);
            AtomicReference<Throwable> readerSaw = new AtomicReference<>();
            AtomicReference<Throwable> acceptSaw = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(2);
            CountDownLatch connected = new CountDownLatch(1);
            AtomicReference<Conn> client = new AtomicReference<>();
            rt.go(() -> {
                try {
                    Conn s = ln.accept();
                    Conn c;
                    while ((c = client.get()) == null) {
                        Go.sleep(Duration.ofMillis(1)); // dial returns on the test thread
                    }
                    connected.countDown();
                    try {
                        c.read(ByteBuffer.allocate(1));
                    } catch (Throwable t) {
                        readerSaw.set(t);
                    }
                    s.close();
                } catch (Throwable t) {
                    readerSaw.set(t);
                } finally {
                    done.countDown();
                }
            });
            client.set(Conn.dial(rt, ln.address()));
            assertTrue(connected.await(10, TimeUnit.SECONDS));
            Thread.sleep(50); // the reader parks
            client.get().close();
            rt.go(() -> {
                try {
                    ln.accept();
                } catch (Throwable t) {
                    acceptSaw.set(t);
                } finally {
                    done.countDown();
                }
            });
            Thread.sleep(50); // the acceptor parks
            ln.close();
            assertTrue(done.await(10, TimeUnit.SECONDS), "close did not wake the waiters");
            assertThat(readerSaw.get()).isInstanceOf(ClosedChannelException.class);
            assertThat(acceptSaw.get()).isInstanceOf(ClosedChannelException.class);
        }
    }

    @Test
    void readersSeeEndOfStream() throws Exception {
        try (GoRuntime rt = runtime(1)) {
            assertEquals(-1, (int) rt.run(() -> {
                try (Listener ln = Listener.listen(LOOPBACK); Conn c = Conn.dial(ln.address()); Conn s = ln.accept()) {
                    Go.go(() -> {
                        Go.sleep(Duration.ofMillis(10));
                        try {
                            s.closeWrite();
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    });
                    return c.read(ByteBuffer.allocate(8));
                }
            }));
        }
    }
}
