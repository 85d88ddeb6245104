package vtcount;

/**
 * Probe (not part of the build): the counters the {@link Agent} makes java.base call. Loaded by
 * the boot loader (the agent appends its jar to the boot class path), so that
 * java.lang.VirtualThread and LinkedTransferQueue can call it. Each thread increments its own
 * slot (by thread id), plainly: two virtual threads of a ping-pong never share a slot, so the
 * sums are exact for the probes that read them, and the count costs a few ns, not a contended
 * cache line.
 */
public final class VtCount {
    static final int SLOTS = 64;
    static final int STRIDE = 8; // a cache line of longs per slot
    /** Kinds: 0 unmounts (VirtualThread.yieldContinuation), 1 awaits (LinkedTransferQueue's DualNode.await). */
    public static final long[][] C = {new long[SLOTS * STRIDE], new long[SLOTS * STRIDE]};

    private VtCount() {}

    private static int slot() {
        return (int) (Thread.currentThread().threadId() & (SLOTS - 1)) * STRIDE;
    }

    public static void unmount() {
        C[0][slot()]++;
    }

    public static void await() {
        C[1][slot()]++;
    }

    public static long sum(int kind) {
        long s = 0;
        for (int i = 0; i < SLOTS; i++) {
            s += C[kind][i * STRIDE];
        }
        return s;
    }
}
