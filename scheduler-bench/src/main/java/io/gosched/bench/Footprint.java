package io.gosched.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * The memory of a JVM peer process as the parked workload measures it: the heap in use after a
 * full collection, from the JVM's own accounting, and the resident set from the kernel.
 *
 * <p>Heap: {@link MemoryMXBean#getHeapMemoryUsage()} read right after {@link System#gc()}. With
 * the default G1 (and no {@code -XX:+ExplicitGCInvokesConcurrent}) {@code System.gc()} is a
 * stop-the-world full collection that compacts, so "used" is then the live objects' bytes plus at
 * most the tail of the last region each worker compacted into: the retained heap, to a few hundred
 * KB. Reading it from the MXBean right after the collection (rather than from
 * {@code GarbageCollectorMXBean.getLastGcInfo()}) keeps the measure the same for every collector;
 * the few objects allocated between the two calls are bytes against the tens or hundreds of MB
 * measured. The collection is repeated until two readings agree within 0.5 % (at most
 * {@link #MAX_COLLECTIONS}): the first one may leave objects that only a second one frees
 * (references cleared by the first, cleaners that run after it).
 *
 * <p>A parked virtual thread's and a parked goroutine's stack is a heap object (the continuation's
 * {@code StackChunk}), and a suspended Kotlin coroutine is its heap-allocated state machine, so
 * the heap figure holds each peer's whole per-goroutine state; the Go peer adds StackInuse to
 * HeapInuse for the same reason.
 *
 * <p>RSS: {@code VmRSS} of {@code /proc/self/status}: what the process holds of the machine,
 * the collector's free but touched regions included. It only grows within a process (the JVM
 * peers run with -Xms = -Xmx, so G1 uncommits nothing), which is why the driver gives each
 * parked run a fresh process.
 */
public final class Footprint {
    /** Upper bound on the collections {@link #settle()} makes. */
    static final int MAX_COLLECTIONS = 8;

    private Footprint() {}

    /** Heap in use after GC and resident set, in bytes; rss is -1 where /proc is missing. */
    public record Snapshot(long heapBytes, long rssBytes) {}

    /** Collects until the heap in use is stable, then reads heap and RSS. */
    public static Snapshot settle() {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long prev = -1;
        for (int i = 0; i < MAX_COLLECTIONS; i++) {
            System.gc();
            long used = mem.getHeapMemoryUsage().getUsed();
            if (prev >= 0 && Math.abs(used - prev) <= prev / 200) {
                prev = used;
                break;
            }
            prev = used;
        }
        return new Snapshot(prev, rssBytes());
    }

    /**
     * Waits until the JIT compilers have been idle (no growth of the total compilation time) for
     * {@code quietMillis}, at most {@code maxMillis}; returns whether they went quiet. A parked
     * goroutine's stack chunk holds the frames as they were frozen, and an interpreted frame is
     * larger than a compiled one, so the parked workload measures only once the code it runs is
     * compiled: on a loaded machine the compile queue can lag the warm-up by seconds.
     */
    public static boolean awaitJitQuiet(long quietMillis, long maxMillis) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) return false;
        long deadline = System.nanoTime() + maxMillis * 1_000_000;
        long last = jit.getTotalCompilationTime(), quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            LockSupport.parkNanos(10_000_000);
            long now = jit.getTotalCompilationTime();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince >= quietMillis * 1_000_000) {
                return true;
            }
        }
        return false;
    }

    /** VmRSS of this process in bytes, or -1 when it cannot be read (not Linux). */
    public static long rssBytes() {
        try {
            return vmRssBytes(Files.readString(Path.of("/proc/self/status")));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The VmRSS line of a {@code /proc/<pid>/status} text ({@code VmRSS:   123456 kB}) in bytes.
     *
     * @throws IllegalArgumentException when there is no such line or it is not in kB
     */
    static long vmRssBytes(String status) {
        for (String line : status.split("\n")) {
            if (!line.startsWith("VmRSS:")) continue;
            String[] f = line.substring("VmRSS:".length()).trim().split("\\s+");
            if (f.length != 2 || !f[1].equals("kB")) throw new IllegalArgumentException("unexpected VmRSS line: " + line);
            return Long.parseLong(f[0]) * 1024;
        }
        throw new IllegalArgumentException("no VmRSS line");
    }
}
