package io.gosched.net;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.PollDesc;
import io.gosched.runtime.RuntimeTimer;
import io.gosched.time.Time;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.time.Instant;

/**
 * A TCP connection whose reads and writes block the calling goroutine, never its thread: the
 * socket is non-blocking, and when an operation would block the goroutine parks on the
 * runtime's netpoller until the socket is ready (Go's net.Conn over internal/poll.FD). Called
 * from a platform thread, the same calls park that thread.
 *
 * <p>Deadlines are absolute, as in Go: once passed, pending and future reads (writes) fail with
 * {@link java.net.SocketTimeoutException} until the deadline is moved, even those that would
 * not block. Inside a synctest bubble a deadline is read against the bubble's clock
 * ({@code Time.now()}), as Go's {@code time.Until}, and then waited out in real time. {@link #close()} wakes
 * blocked readers and writers with {@link java.nio.channels.AsynchronousCloseException}. One
 * goroutine may read while another writes; concurrent reads (or writes) need the caller's own
 * lock, since the bytes of two readers would interleave anyway.
 *
 * Go: net/net.go conn, internal/poll/fd_unix.go FD
 */
public final class Conn implements AutoCloseable {

    private final SocketChannel ch;
    private final PollDesc pd;

    Conn(SocketChannel ch, PollDesc pd) {
        this.ch = ch;
        this.pd = pd;
    }

    /** Connects to addr from a goroutine (the goroutine parks while connecting). */
    public static Conn dial(SocketAddress addr) throws IOException {
        return dial(null, addr);
    }

    /**
     * Connects to addr. rt names the runtime whose netpoller serves the connection; null means
     * the current goroutine's.
     * Go: net.Dial
     */
    public static Conn dial(GoRuntime rt, SocketAddress addr) throws IOException {
        SocketChannel ch = Io.call(() -> {
            SocketChannel s = SocketChannel.open();
            s.configureBlocking(false);
            s.setOption(StandardSocketOptions.TCP_NODELAY, true);
            return s;
        });
        PollDesc pd = null;
        try {
            pd = rt != null ? PollDesc.open(rt, ch) : PollDesc.open(ch);
            Conn c = new Conn(ch, pd);
            if (!Io.call(() -> ch.connect(addr))) {
                while (!Io.call(ch::finishConnect)) {
                    pd.waitConnect();
                }
            }
            return c;
        } catch (IOException | RuntimeException e) {
            if (pd != null) {
                pd.close();
            }
            Io.call(() -> {
                ch.close();
                return null;
            });
            throw e;
        }
    }

    /**
     * Reads into dst; returns the number of bytes read (at least 1 if dst has room), or -1 at
     * end of stream. Blocks the goroutine until data arrives, the read deadline passes or the
     * connection is closed.
     * Go: internal/poll.FD.Read
     */
    public int read(ByteBuffer dst) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        pd.prepareRead(); // a passed deadline fails the read even with data waiting, as in Go
        for (;;) {
            int n = Io.read(ch, dst);
            if (n != 0) {
                return n;
            }
            pd.waitRead();
        }
    }

    /** Reads into b[off, off+len); see {@link #read(ByteBuffer)}. */
    public int read(byte[] b, int off, int len) throws IOException {
        return read(ByteBuffer.wrap(b, off, len));
    }

    /** Reads exactly dst.remaining() bytes; false if the stream ended first. */
    public boolean readFully(ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            if (read(dst) < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Writes all of src, blocking the goroutine while the socket buffer is full. When the write
     * deadline passes first, throws {@link java.net.SocketTimeoutException}; src's position then
     * says how much was written (Go: n &gt; 0 with the error).
     * Go: internal/poll.FD.Write
     */
    public void write(ByteBuffer src) throws IOException {
        pd.prepareWrite(); // a passed deadline fails the write even with room in the buffer, as in Go
        while (src.hasRemaining()) {
            if (Io.write(ch, src) == 0) {
                pd.waitWrite();
            }
        }
    }

    /** Writes all of b. */
    public void write(byte[] b) throws IOException {
        write(ByteBuffer.wrap(b));
    }

    /** Sets both deadlines; null clears them. Go: SetDeadline */
    public void setDeadline(Instant t) {
        setReadDeadline(t);
        setWriteDeadline(t);
    }

    /** Sets the read deadline; null clears it. Go: SetReadDeadline */
    public void setReadDeadline(Instant t) {
        pd.setReadDeadline(toNanotime(t));
    }

    /** Sets the write deadline; null clears it. Go: SetWriteDeadline */
    public void setWriteDeadline(Instant t) {
        pd.setWriteDeadline(toNanotime(t));
    }

    /**
     * Converts a deadline to the runtime's monotonic clock; 0 = none. Its delay is counted from
     * the caller's {@link Time#now()}, which inside a synctest bubble is the bubble's clock, and
     * the poller's timer runs on the real clock: a deadline of {@code Time.now().plus(d)} gives
     * the operation d of real time in or out of a bubble.
     * Go: internal/poll setDeadlineImpl (time.Until(t)), runtime/netpoll.go poll_runtime_pollSetDeadline (+ nanotime())
     */
    static long toNanotime(Instant t) {
        if (t == null) {
            return 0;
        }
        long now = RuntimeTimer.nanotime();
        Instant callerNow = Time.now();
        long d;
        try {
            d = Duration.between(callerNow, t).toNanos();
        } catch (ArithmeticException e) {
            d = t.isBefore(callerNow) ? -1 : Long.MAX_VALUE / 2;
        }
        long when = d <= 0 ? now - 1 : now + d;
        if (d > 0 && when < now) {
            when = Long.MAX_VALUE;
        }
        return when == 0 ? 1 : when;
    }

    /** The local address. */
    public InetSocketAddress localAddress() throws IOException {
        return (InetSocketAddress) ch.getLocalAddress();
    }

    /** The remote address. */
    public InetSocketAddress remoteAddress() throws IOException {
        return (InetSocketAddress) ch.getRemoteAddress();
    }

    /** Half-closes the write side (the peer reads end of stream). */
    public void closeWrite() throws IOException {
        Io.call(ch::shutdownOutput);
    }

    /** Closes the connection, waking blocked readers and writers. Idempotent. */
    @Override
    public void close() throws IOException {
        pd.close();
        Io.call(() -> {
            ch.close();
            return null;
        });
    }
}
