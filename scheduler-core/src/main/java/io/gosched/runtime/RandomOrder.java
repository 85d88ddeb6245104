package io.gosched.runtime;

import java.util.Arrays;

/**
 * Enumerates all Ps in a pseudo-random order for work stealing: a random start and a random
 * stride coprime with the count visit every P exactly once.
 *
 * <p>{@link #start(int)} returns a cursor packed in a long so that stealing allocates nothing:
 * bits 0..31 hold the position, 32..47 the stride, 48..63 the steps taken.
 *
 * Go: runtime/proc.go randomOrder, randomEnum
 */
final class RandomOrder {
    private final int count;
    private final int[] coprimes;

    RandomOrder(int count) {
        if (count < 1 || count > 0xFFFF) {
            throw new IllegalArgumentException("count out of range: " + count);
        }
        this.count = count;
        int[] c = new int[count];
        int k = 0;
        for (int i = 1; i <= count; i++) {
            if (gcd(i, count) == 1) {
                c[k++] = i;
            }
        }
        this.coprimes = Arrays.copyOf(c, k);
    }

    int count() {
        return count;
    }

    int coprimeCount() {
        return coprimes.length;
    }

    /** A cursor positioned at the first P to visit; r is a non-negative random number. */
    long start(int r) {
        int pos = Integer.remainderUnsigned(r, count);
        int inc = coprimes[Integer.remainderUnsigned(Integer.divideUnsigned(r, count), coprimes.length)];
        return pack(pos, inc, 0);
    }

    static boolean done(long cursor, int count) {
        return steps(cursor) == count;
    }

    static long next(long cursor, int count) {
        int pos = (position(cursor) + stride(cursor)) % count;
        return pack(pos, stride(cursor), steps(cursor) + 1);
    }

    static int position(long cursor) {
        return (int) (cursor & 0xFFFF_FFFFL);
    }

    static int stride(long cursor) {
        return (int) ((cursor >>> 32) & 0xFFFF);
    }

    static int steps(long cursor) {
        return (int) (cursor >>> 48);
    }

    private static long pack(int pos, int inc, int steps) {
        return (pos & 0xFFFF_FFFFL) | ((long) inc << 32) | ((long) steps << 48);
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
