package io.gosched.agent.samples;

import java.util.function.IntSupplier;

/**
 * Shapes of code the agent must instrument without changing what it computes: loops of every
 * kind, a constructor, a lambda, exceptions in a loop, wide locals, and the places it must leave
 * alone (synchronized code, the static initializer). The expected number of checks per method
 * is in PreemptTransformerTest.
 */
public class Loops {
    static final int[] TABLE;
    static {
        int[] t = new int[8];
        for (int i = 0; i < t.length; i++) {
            t[i] = i * i;
        }
        TABLE = t;
    }

    final long seed;

    public Loops(long seed) {
        super();
        long s = seed;
        for (int i = 0; i < 3; i++) {
            s = s * 31 + i;
        }
        this.seed = s;
    }

    /** entry + 1 loop. */
    public static long sumTo(int n) {
        long s = 0;
        int i = 0;
        while (i < n) {
            s += i;
            i++;
        }
        return s;
    }

    /** entry + 2 loops. */
    public static long nested(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++) {
                s += (long) i * j;
            }
        }
        return s;
    }

    /** entry + 1 loop (a do-while's conditional back-edge). */
    public static int doWhile(int n) {
        int k = 0;
        do {
            k += 3;
        } while (k < n);
        return k;
    }

    /** entry + 1 loop around a table switch whose targets all lie ahead. */
    public static int switchInLoop(int n) {
        int acc = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 4) {
                case 0 -> acc += 1;
                case 1 -> acc += 10;
                case 2 -> acc += 100;
                default -> acc += 1000;
            }
        }
        return acc;
    }

    /** entry only: recursion has no back-edge; the entry check covers it. */
    public static long fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    /** entry + 1 loop; the catch handler jumps forward, the loop back. */
    public static int exceptionsInLoop(int n) {
        int caught = 0;
        for (int i = 0; i < n; i++) {
            try {
                if (i % 3 == 0) {
                    throw new IllegalStateException("x" + i);
                }
            } catch (IllegalStateException e) {
                caught++;
            }
        }
        return caught;
    }

    /** entry + 1 loop, with long and double locals around the check. */
    public static double wide(int n) {
        long a = 1;
        double d = 0.5;
        for (int i = 0; i < n; i++) {
            a = a * 3 + i;
            d = d * 1.5 + a;
        }
        return d + a;
    }

    /** The lambda's body is a synthetic method of this class: entry + 1 loop there, entry here. */
    public static int lambda(int n) {
        IntSupplier f = () -> {
            int s = 0;
            for (int i = 0; i < n; i++) {
                s += TABLE[i % TABLE.length];
            }
            return s;
        };
        return f.getAsInt();
    }

    /** None: a synchronized method is left alone. */
    public synchronized long synchronizedLoop(int n) {
        long s = seed;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    /** entry only: back-edges of a method with a synchronized block are left alone. */
    public long synchronizedBlock(int n) {
        long s = 0;
        synchronized (this) {
            for (int i = 0; i < n; i++) {
                s += i;
            }
        }
        return s;
    }

    /** entry + 1: an empty infinite loop left by a break from a labelled block. */
    public static int breakOut(int n) {
        int i = 0;
        outer:
        for (;;) {
            if (++i >= n) {
                break outer;
            }
        }
        return i;
    }
}
