package io.gosched.bench.jmh.agentcost;

import io.gosched.runtime.Go;

/** The same loops with {@code Go.checkpoint()} written in by hand, the safe point users call today. */
public final class ByHand {
    private ByHand() {}

    public static long sum(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i];
            Go.checkpoint();
        }
        return s;
    }

    public static long hash(int n) {
        long h = 17;
        for (int i = 0; i < n; i++) {
            h = h * 31 + i;
            Go.checkpoint();
        }
        return h;
    }
}
