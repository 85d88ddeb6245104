package io.gosched.agent.it.cold;

import io.gosched.agent.it.hot.Hog;

/** The same loop as {@code hot.Hog.spin}, in a package the agent is not told about: it must stay untouched. */
public final class ColdHog {
    private ColdHog() {
    }

    public static long spin(Hog.Stop stop) {
        long i = 0;
        while (!stop.stop) {
            i++;
        }
        return i;
    }
}
