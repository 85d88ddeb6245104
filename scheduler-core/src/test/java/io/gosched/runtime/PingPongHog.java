package io.gosched.runtime;

import java.time.Duration;

/**
 * Go's TestPingPongHog, ported faithfully: GOMAXPROCS 1, a "hog" pair of goroutines hands a
 * token back and forth over an unbuffered channel doing 1e6 units of work per turn, a "light"
 * pair 1e3; after 100 ms the work counts must be within a factor of 20. Each pair shares one
 * time slice through runnext, so sysmon preempts a pair as a whole after the quantum and both
 * pairs get about the same CPU; if a pair kept the P the gap would be ~1000x.
 *
 * <p>A class of its own so that a fresh JVM can run it as its very first code ({@link #main}):
 * that is where it used to fail, about 1 run in 40 on a loaded machine (see PreemptionTest).
 *
 * Go: runtime/proc_test.go TestPingPongHog
 */
public final class PingPongHog {

    /** The counts of one run, and what the scheduler did meanwhile. */
    public record Result(long hogCount, long lightCount, long preemptions, long schedticks) {
        static final long FACTOR = 20;

        /** Go's check: hogCount/factor > lightCount || lightCount/factor > hogCount fails. */
        boolean ok() {
            return !(hogCount / FACTOR > lightCount || lightCount / FACTOR > hogCount);
        }

        @Override
        public String toString() {
            return (ok() ? "ok" : "FAIL") + " hog=" + hogCount + " light=" + lightCount
                    + " preemptions=" + preemptions + " schedticks=" + schedticks;
        }
    }

    static volatile long sink;

    /** Units of work, as Go's {@code *counter++} loop, kept from being folded away by the JIT. */
    private static void work(int limit, long[] counter) {
        long x = 0;
        for (int i = 0; i < limit; i++) {
            x += i ^ (x >>> 3);
        }
        sink = x;
        counter[0] += limit;
    }

    private static void run(int limit, long[] counter, Chan<Boolean> wake, Chan<Boolean> done) {
        for (;;) {
            Selected s = Select.select(Select.recv(done), Select.recv(wake));
            if (s.index() == 0) {
                return;
            }
            work(limit, counter);
            wake.send(true);
        }
    }

    /** One run on a fresh one-P runtime. */
    public static Result run() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            return rt.run(() -> {
                Chan<Boolean> done = Chan.make();
                Chan<Boolean> hogChan = Chan.make();
                Chan<Boolean> lightChan = Chan.make();
                long[] hogCount = new long[1];
                long[] lightCount = new long[1];
                // Start two co-scheduled hog goroutines, then two co-scheduled light ones.
                for (int i = 0; i < 2; i++) {
                    Go.go(() -> run(1_000_000, hogCount, hogChan, done));
                }
                for (int i = 0; i < 2; i++) {
                    Go.go(() -> run(1_000, lightCount, lightChan, done));
                }
                // Start the goroutine pairs and wait for a few preemption rounds.
                hogChan.send(true);
                lightChan.send(true);
                Go.sleep(Duration.ofMillis(100));
                done.close();
                // Every goroutine is parked or queued now: the counts stand still.
                long hog = hogCount[0];
                long light = lightCount[0];
                SchedStats st = rt.stats();
                return new Result(hog, light, st.preemptions(), rt.sched().allp[0].schedtick());
            });
        }
    }

    /** Runs once as the first code of this JVM and prints the result; exit status 1 on failure. */
    public static void main(String[] args) throws Exception {
        Result r = run();
        System.out.println(r);
        System.exit(r.ok() ? 0 : 1);
    }
}
