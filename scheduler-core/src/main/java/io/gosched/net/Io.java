package io.gosched.net;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.UndeclaredThrowableException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Every call into a JDK channel made by goroutine code goes through here.
 *
 * <p>Why. JDK socket channels guard reads, writes, connect and close with ReentrantLocks, whose
 * owner is {@code Thread.currentThread()}. C2 treats that value as constant within one compiled
 * method (see {@code M.current} in the runtime), so if a goroutine frame inlined a channel call
 * and, in the same loop, parked on the netpoller and resumed on another M, the next call would
 * lock and unlock in the old M's name: an IllegalMonitorStateException that leaves the lock
 * held, and a close or a selector deregistration that waits for it forever (seen in the echo
 * test as a deadlock between the poller and a closing goroutine). A method handle held in a
 * non-final field is not a compile-time constant, so the JIT cannot inline through it: each
 * channel call runs in a frame of its own that reads the current thread afresh.
 */
final class Io {

    private Io() {
    }

    /** An operation on a channel. */
    @FunctionalInterface
    interface Call<T> {
        T call() throws IOException;
    }

    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle read = find("read0", MethodType.methodType(int.class, SocketChannel.class, ByteBuffer.class));
    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle write = find("write0", MethodType.methodType(int.class, SocketChannel.class, ByteBuffer.class));
    @SuppressWarnings("FieldMayBeFinal")
    private static MethodHandle call = find("call0", MethodType.methodType(Object.class, Call.class));

    private static MethodHandle find(String name, MethodType type) {
        try {
            return MethodHandles.lookup().findStatic(Io.class, name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static int read(SocketChannel ch, ByteBuffer dst) throws IOException {
        try {
            return (int) read.invokeExact(ch, dst);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    static int write(SocketChannel ch, ByteBuffer src) throws IOException {
        try {
            return (int) write.invokeExact(ch, src);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T call(Call<T> c) throws IOException {
        try {
            return (T) (Object) call.invokeExact(c);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    private static int read0(SocketChannel ch, ByteBuffer dst) throws IOException {
        return ch.read(dst);
    }

    private static int write0(SocketChannel ch, ByteBuffer src) throws IOException {
        return ch.write(src);
    }

    private static Object call0(Call<?> c) throws IOException {
        return c.call();
    }
}
