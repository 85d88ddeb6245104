package io.gosched.runtime;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Replaces this process's image by another program, keeping its pid: {@code execve(2)} through
 * the Foreign Function and Memory API. Used by {@link SafeJvm#relaunchIfNeeded} so that a JVM
 * that lacks an option becomes, in the same process, the JVM that has it; a child JVM instead
 * would be a second process that a SIGKILL of the started pid leaves running.
 *
 * <p>What crosses an exec, and what is done about it:
 * <ul>
 * <li>open file descriptors without close-on-exec: the JDK opens its files (the jar, the
 *     class path) without it, so every descriptor above 2 is marked close-on-exec first, and
 *     only standard input, output and error reach the new JVM;
 * <li>the calling thread's signal mask: a HotSpot Java thread blocks SIGQUIT (only the VM
 *     thread takes it), which would leave the new JVM's first thread blocking it, so the mask
 *     is emptied right before the call, as a freshly started program has it;
 * <li>signal handlers are reset by the kernel; ignored signals stay ignored, as they would for
 *     the original launch;
 * <li>buffered output of System.out and System.err is flushed, as the image holding it ends.
 * </ul>
 * Linux only: other systems get a reason back instead (their constants and descriptor listing
 * differ, and this is tested on Linux alone).
 */
final class InPlaceExec {

    private static final int F_SETFD = 2;
    private static final int FD_CLOEXEC = 1;
    private static final int SIG_SETMASK = 2; // Linux
    /** glibc's sigset_t: 1024 bits. An all-zero one is the empty set. */
    private static final long SIGSET_BYTES = 128;

    private InPlaceExec() {
    }

    /**
     * Executes argv (argv[0] is the program's path) with env in place of this process. Returns
     * only when it could not: then with the reason, this process unchanged but for the
     * close-on-exec marks of its descriptors (which only an exec reads).
     */
    static String exec(List<String> argv, Map<String, String> env) {
        if (!"Linux".equals(System.getProperty("os.name"))) {
            return "replacing the process in place is implemented for Linux only (this is " + System.getProperty("os.name") + ")";
        }
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            StructLayout state = Linker.Option.captureStateLayout();
            VarHandle errno = state.varHandle(MemoryLayout.PathElement.groupElement("errno"));
            MethodHandle execve = linker.downcallHandle(libc.find("execve").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Linker.Option.captureCallState("errno"));
            MethodHandle fcntl = linker.downcallHandle(libc.find("fcntl").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2));
            MethodHandle sigmask = linker.downcallHandle(libc.find("pthread_sigmask").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment path = arena.allocateFrom(argv.get(0));
                MemorySegment cArgv = cStrings(arena, argv);
                List<String> entries = new ArrayList<>();
                env.forEach((k, v) -> entries.add(k + "=" + v));
                MemorySegment cEnv = cStrings(arena, entries);
                MemorySegment captured = arena.allocate(state);
                MemorySegment empty = arena.allocate(SIGSET_BYTES); // zeroed: no signal
                MemorySegment saved = arena.allocate(SIGSET_BYTES);

                closeOnExec(fcntl);
                System.out.flush();
                System.err.flush();
                int rc = (int) sigmask.invokeExact(SIG_SETMASK, empty, saved);
                if (rc != 0) {
                    return "pthread_sigmask failed: " + rc;
                }
                int r = (int) execve.invokeExact(captured, path, cArgv, cEnv);
                // Still here: the exec failed, and this JVM goes on. Give the thread its mask back.
                int err = (int) errno.get(captured, 0L);
                int ignored = (int) sigmask.invokeExact(SIG_SETMASK, saved, MemorySegment.NULL);
                return "execve(" + argv.get(0) + ") returned " + r + ", errno " + err;
            }
        } catch (Throwable t) {
            return t.toString();
        }
    }

    /** A NULL-terminated array of C strings. */
    private static MemorySegment cStrings(Arena arena, List<String> strings) {
        MemorySegment array = arena.allocate(ADDRESS, strings.size() + 1L); // zeroed: the last is NULL
        for (int i = 0; i < strings.size(); i++) {
            array.setAtIndex(ADDRESS, i, arena.allocateFrom(strings.get(i)));
        }
        return array;
    }

    /**
     * Marks every open descriptor above standard error close-on-exec. The listing's own
     * descriptor is among those listed; it is closed before the exec anyway.
     */
    private static void closeOnExec(MethodHandle fcntl) throws Throwable {
        List<Integer> fds = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path p : dir) {
                try {
                    fds.add(Integer.parseInt(p.getFileName().toString()));
                } catch (NumberFormatException notAnFd) {
                    // nothing else is listed there
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/fd: " + e, e);
        }
        for (int fd : fds) {
            if (fd > 2) {
                int ignored = (int) fcntl.invokeExact(fd, F_SETFD, FD_CLOEXEC); // EBADF for the listing's own: closed already
            }
        }
    }
}
