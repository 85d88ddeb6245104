package io.gosched.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import io.gosched.testing.Await;
import java.util.function.BooleanSupplier;

/** Shared test plumbing: run code in goroutines or on platform threads, scaled stress, bounded waits. */
public final class GoTesting {
    /** Stress multiplier: {@code -Dgosched.stress=N}; 1 is the short default. */
    public static final int STRESS = Integer.getInteger("gosched.stress", 1);

    private GoTesting() {
    }

    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /**
     * Runs main as the main goroutine of a fresh runtime with n Ps; the runtime is closed afterwards.
     * The runtime randomizes its run-queue decisions (SchedulerConfig.randomizeScheduling, as Go's
     * tests run under the race detector): what runs here must hold under any interleaving, so an
     * ordering the scheduler happens to give is not to be relied on.
     */
    public static <T> T runGo(int procs, Callable<T> main) throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs)
                .randomizeScheduling(true).build())) {
            return rt.run(main);
        }
    }

    public static void runGo(int procs, Body main) throws Exception {
        runGo(procs, () -> {
            main.run();
            return null;
        });
    }

    /** Where the code under test runs: goroutines of a runtime, or plain platform threads. */
    public enum Mode {
        GOROUTINES, THREADS;

        /** Runs main in this mode (as the main goroutine, or on the calling thread). */
        public void run(int procs, Body main) throws Exception {
            if (this == GOROUTINES) {
                runGo(procs, main);
            } else {
                main.run();
            }
        }
    }

    private static final List<Thread> THREADS = new ArrayList<>();

    /** Starts body concurrently: {@code Go.go} inside a goroutine, a new platform thread outside. */
    public static void spawn(Body body) {
        Runnable r = () -> {
            try {
                body.run();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
        if (Go.inGoroutine()) {
            Go.go(r);
        } else {
            Thread t = Thread.ofPlatform().daemon(true).start(r);
            synchronized (THREADS) {
                THREADS.add(t);
            }
        }
    }

    /** Sleeps the goroutine (parking it) or the thread. */
    public static void pause(long millis) {
        if (Go.inGoroutine()) {
            Go.sleep(Duration.ofMillis(millis));
        } else {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /**
     * A ping-pong pair: the calling goroutine and one it starts hand a counter back and forth over
     * two unbuffered channels, roundTrips times (2 x roundTrips goroutine-to-goroutine hand-offs);
     * fails if a value comes back wrong. Executed only by a goroutine.
     */
    public static void pingPong(int roundTrips) {
        Chan<Long> ping = Chan.make();
        Chan<Long> pong = Chan.make();
        Go.go(() -> {
            for (int i = 0; i < roundTrips; i++) {
                pong.send(ping.recv() + 1);
            }
        });
        for (long i = 0; i < roundTrips; i++) {
            ping.send(i);
            long back = pong.recv();
            if (back != i + 1) {
                throw new AssertionError("ping-pong: sent " + i + ", got back " + back);
            }
        }
    }

    /** Waits until cond holds; fails with what otherwise. The one await of every module: {@link Await#until}. */
    public static void await(String what, BooleanSupplier cond) {
        Await.until(what, cond);
    }
}
