import io.gosched.runtime.SafeJvm;

/**
 * The smallest program that makes itself safe the way the service does: SafeJvm.relaunchIfNeeded
 * first in main, then exit. Timed from outside (bench/probes/relaunch-startup.sh), its run is one
 * JVM start-up on a JVM given the options, and what the relaunch adds on a JVM without them.
 */
public class RelaunchProbe {
    public static void main(String[] args) {
        SafeJvm.relaunchIfNeeded(args);
        if (!SafeJvm.isSafe()) {
            System.err.println("still unsafe");
            System.exit(1);
        }
    }
}
