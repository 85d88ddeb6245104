package io.gosched.bench.echo;

import io.gosched.net.Conn;
import io.gosched.net.Listener;
import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Echo throughput: a gosched server (a goroutine per connection on the netpoller) against a
 * virtual-thread-per-connection server, driven by the same client in the same run.
 *
 * <p>The client is the same for both servers: one platform thread per connection writing a
 * message and reading its echo, so client scheduling does not favour either server. Each round
 * opens the connections, exchanges the messages, checks every echoed byte, and reports messages
 * per second; rounds alternate between the servers and the median of the measured rounds is
 * printed. Loopback only.
 *
 * <pre>
 * java --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp scheduler-bench/target/benchmarks.jar \
 *     io.gosched.bench.echo.EchoBench [connections=200] [messages=2000] [size=64] [rounds=5] [procs=2]
 * </pre>
 */
public final class EchoBench {

    private EchoBench() {
    }

    public static void main(String[] args) throws Exception {
        int connections = arg(args, 0, 200);
        int messages = arg(args, 1, 2000);
        int size = arg(args, 2, 64);
        int rounds = arg(args, 3, 5);
        int procs = arg(args, 4, 2);
        System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(procs));

        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).build());
             GoschedServer gs = new GoschedServer(rt);
             VirtualThreadServer vt = new VirtualThreadServer()) {
            System.out.printf("echo: %d connections x %d messages of %d bytes, %d procs, loopback%n",
                    connections, messages, size, procs);
            // One warm-up round each, then measured rounds, alternating.
            client(gs.port(), connections, messages, size);
            client(vt.port(), connections, messages, size);
            double[] g = new double[rounds];
            double[] v = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                g[r] = client(gs.port(), connections, messages, size);
                v[r] = client(vt.port(), connections, messages, size);
                System.out.printf("round %d: gosched %.0f msg/s, virtual threads %.0f msg/s%n", r, g[r], v[r]);
            }
            double gm = median(g);
            double vm = median(v);
            System.out.printf("RESULT echo gosched=%.0f vt=%.0f msg/s ratio gosched/vt=%.2f%n", gm, vm, gm / vm);
        }
    }

    /** Runs one round against port; returns echoed messages per second. Fails on a wrong byte. */
    static double client(int port, int connections, int messages, int size) throws Exception {
        CountDownLatch ready = new CountDownLatch(connections);
        CountDownLatch go = new CountDownLatch(1);
        AtomicLong echoed = new AtomicLong();
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            int id = c;
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = new Socket("127.0.0.1", port)) {
                    s.setTcpNoDelay(true);
                    OutputStream out = s.getOutputStream();
                    InputStream in = s.getInputStream();
                    byte[] msg = new byte[size];
                    byte[] back = new byte[size];
                    ready.countDown();
                    go.await();
                    for (int m = 0; m < messages; m++) {
                        Arrays.fill(msg, (byte) (id + m));
                        out.write(msg);
                        int n = 0;
                        while (n < size) {
                            int k = in.read(back, n, size - n);
                            if (k < 0) {
                                throw new IOException("server closed the connection early");
                            }
                            n += k;
                        }
                        if (!Arrays.equals(msg, back)) {
                            throw new IOException("echo differs on connection " + id + " message " + m);
                        }
                        echoed.incrementAndGet();
                    }
                } catch (Throwable t) {
                    errors.add(t);
                    ready.countDown();
                }
            }));
        }
        ready.await();
        long t0 = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long t1 = System.nanoTime();
        if (!errors.isEmpty()) {
            throw new IllegalStateException("echo round failed: " + errors.get(0), errors.get(0));
        }
        long expected = (long) connections * messages;
        if (echoed.get() != expected) {
            throw new IllegalStateException("echoed " + echoed.get() + " of " + expected + " messages");
        }
        return expected / ((t1 - t0) / 1e9);
    }

    /** A goroutine per connection, blocking reads and writes on the netpoller. */
    static final class GoschedServer implements AutoCloseable {
        private final Listener listener;

        GoschedServer(GoRuntime rt) throws IOException {
            listener = Listener.listen(rt, new InetSocketAddress("127.0.0.1", 0));
            rt.go(() -> {
                for (;;) {
                    Conn conn;
                    try {
                        conn = listener.accept();
                    } catch (IOException closed) {
                        return;
                    }
                    Go.go(() -> echo(conn));
                }
            });
        }

        private static void echo(Conn conn) {
            ByteBuffer buf = ByteBuffer.allocate(4096);
            try (conn) {
                for (;;) {
                    buf.clear();
                    if (conn.read(buf) < 0) {
                        return;
                    }
                    buf.flip();
                    conn.write(buf);
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        int port() throws IOException {
            return listener.address().getPort();
        }

        @Override
        public void close() throws IOException {
            listener.close();
        }
    }

    /** The JDK's own answer: a virtual thread per connection on blocking sockets. */
    static final class VirtualThreadServer implements AutoCloseable {
        private final ServerSocket server;

        VirtualThreadServer() throws IOException {
            server = new ServerSocket();
            server.bind(new InetSocketAddress("127.0.0.1", 0), 4096);
            Thread.ofVirtual().start(() -> {
                for (;;) {
                    Socket s;
                    try {
                        s = server.accept();
                    } catch (IOException closed) {
                        return;
                    }
                    Thread.ofVirtual().start(() -> echo(s));
                }
            });
        }

        private static void echo(Socket s) {
            byte[] buf = new byte[4096];
            try (s) {
                s.setTcpNoDelay(true);
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        int port() {
            return server.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    private static int arg(String[] args, int i, int dflt) {
        return args.length > i ? Integer.parseInt(args[i]) : dflt;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
