package io.gosched.net;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.PollDesc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A TCP listener whose {@link #accept()} blocks the calling goroutine, never its thread (Go's
 * net.Listener over the netpoller). {@link #close()} wakes a blocked accept with {@link
 * java.nio.channels.AsynchronousCloseException}.
 *
 * Go: net/tcpsock.go TCPListener
 */
public final class Listener implements AutoCloseable {

    private final GoRuntime rt;
    private final ServerSocketChannel ch;
    private final PollDesc pd;

    private Listener(GoRuntime rt, ServerSocketChannel ch, PollDesc pd) {
        this.rt = rt;
        this.ch = ch;
        this.pd = pd;
    }

    /** Listens on addr (port 0: any free port) for the current goroutine's runtime. */
    public static Listener listen(SocketAddress addr) throws IOException {
        return listen(null, addr);
    }

    /**
     * Listens on addr; rt serves it and the connections it accepts (null: the current
     * goroutine's runtime).
     * Go: net.Listen
     */
    public static Listener listen(GoRuntime rt, SocketAddress addr) throws IOException {
        ServerSocketChannel ch = Io.call(() -> {
            ServerSocketChannel s = ServerSocketChannel.open();
            try {
                s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                s.bind(addr, 4096);
                s.configureBlocking(false);
                return s;
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        });
        try {
            PollDesc pd = rt != null ? PollDesc.open(rt, ch) : PollDesc.open(ch);
            return new Listener(rt, ch, pd);
        } catch (IOException | RuntimeException e) {
            Io.call(() -> {
                ch.close();
                return null;
            });
            throw e;
        }
    }

    /** Waits for the next connection. Go: TCPListener.Accept */
    public Conn accept() throws IOException {
        for (;;) {
            SocketChannel s = Io.call(() -> {
                SocketChannel a = ch.accept();
                if (a != null) {
                    try {
                        a.configureBlocking(false);
                        a.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    } catch (IOException | RuntimeException e) {
                        a.close();
                        throw e;
                    }
                }
                return a;
            });
            if (s != null) {
                try {
                    return new Conn(s, rt != null ? PollDesc.open(rt, s) : PollDesc.open(s));
                } catch (IOException | RuntimeException e) {
                    Io.call(() -> {
                        s.close();
                        return null;
                    });
                    throw e;
                }
            }
            pd.waitRead();
        }
    }

    /** The bound address (with the actual port). */
    public InetSocketAddress address() throws IOException {
        return (InetSocketAddress) ch.getLocalAddress();
    }

    /** Stops listening and wakes a blocked accept. Idempotent. */
    @Override
    public void close() throws IOException {
        pd.close();
        Io.call(() -> {
            ch.close();
            return null;
        });
    }
}
