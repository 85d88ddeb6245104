package io.gosched.agent.samples;

/** A named class with a nested class, for prefix matching. */
public class Outer {
    public static class Inner {
        public static int one() {
            return 1;
        }
    }
}
