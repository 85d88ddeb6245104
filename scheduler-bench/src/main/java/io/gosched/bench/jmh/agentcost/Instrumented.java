package io.gosched.bench.jmh.agentcost;

/**
 * The loops of AgentCostBenchmark. {@code Plain} and {@code Instrumented} are the same source;
 * the benchmark's JVM runs with the agent told about {@code Instrumented} only.
 */
public final class Instrumented {
    private Instrumented() {}

    /** A reduction C2 unrolls and vectorizes when nothing else is in the loop. */
    public static long sum(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
        }
        return s;
    }

    /** A loop-carried dependency (no vectorizing): the per-iteration cost of the check shows. */
    public static long hash(int n) {
        long h = 17;
        for (int i = 0; i < n; i++) {
            h = h * 31 + i;
        }
        return h;
    }

    /** The hog workload's loop: a volatile read and an increment per turn, nothing else (the worst case). */
    public static long spin(io.gosched.bench.HogState st, int n) {
        long i = 0;
        while (!st.stop && i < n) {
            i++;
        }
        return i;
    }

    /** A loop calling a small method per turn: after inlining, the callee's entry check joins the loop's. */
    public static long calls(int n) {
        long h = 17;
        for (int i = 0; i < n; i++) {
            h = mix(h, i);
        }
        return h;
    }

    private static long mix(long h, int i) {
        return (h ^ i) * 0x9E3779B97F4A7C15L;
    }
}
