package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gosched.sync.WaitGroup;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The panic policy (an uncaught exception in a goroutine ends the runtime, as an unrecovered
 * panic ends a Go program) and Goexit, with ports of Go's runtime tests (crash_test.go,
 * stack_test.go) adapted to Java's exceptions: a Go {@code defer} is a {@code finally}, a {@code
 * recover()} a {@code catch}.
 */
@Timeout(60)
class PanicTest {

    static GoRuntime crashing(int procs) {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(procs).shutdownTimeout(Duration.ofSeconds(2)).build());
    }

    @Test
    void crashIsTheDefault() {
        assertEquals(SchedulerConfig.PanicPolicy.CRASH, SchedulerConfig.defaults().panicPolicy());
        assertThat(SchedulerConfig.defaults().uncaughtExceptionHandler()).isNull();
    }

    @Test
    void crashEndsRunWithTheGoroutinesVeryException() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            IllegalStateException thrown = new IllegalStateException("boom");
            AtomicLong failing = new AtomicLong();
            GoroutinePanicException p = assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                Chan<Object> never = Chan.make();
                Go.go(() -> {
                    failing.set(Go.goid());
                    throw thrown;
                });
                never.recv(); // main blocks for ever: only the panic ends run()
                return null;
            }));
            assertSame(thrown, p.getCause());
            assertEquals(failing.get(), p.goid());
            assertThat(p.getMessage()).contains("goroutine " + failing.get()).contains("boom");
            assertThat(p.labels()).isEmpty();
            // The runtime is over: later runs fail with the same panic, new goroutines are refused.
            assertSame(p, assertThrows(GoroutinePanicException.class, () -> rt.run(() -> 1)));
            assertThrows(RejectedExecutionException.class, () -> rt.go(() -> { }));
            assertTrue(rt.isShutdown());
        }
    }

    @Test
    void crashStopsEveryGoroutine() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            AtomicLong spins = new AtomicLong();
            AtomicBoolean parkedWokeUp = new AtomicBoolean();
            CountDownLatch spinning = new CountDownLatch(1);
            assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                Go.go(() -> { // a computing goroutine: stopped at a safe point
                    spinning.countDown();
                    for (;;) {
                        Go.checkpoint();
                        // Work between safe points: the panic lands here almost always, and the
                        // goroutine must still not count once run() has thrown.
                        long end = System.nanoTime() + 300_000_000;
                        while (System.nanoTime() < end) {
                            Thread.onSpinWait();
                        }
                        spins.incrementAndGet();
                    }
                });
                Go.go(() -> { // a sleeping one: never woken again
                    Go.sleep(Duration.ofMillis(300));
                    parkedWokeUp.set(true);
                });
                spinning.await();
                Go.go(() -> { throw new IllegalArgumentException("panic"); });
                Go.sleep(Duration.ofSeconds(30));
                return null;
            }));
            long after = spins.get();
            Thread.sleep(500);
            assertEquals(after, spins.get(), "a goroutine went on after the panic");
            assertFalse(parkedWokeUp.get(), "a parked goroutine was resumed after the panic");
        }
    }

    @Test
    void logPolicyKeepsTheRuntimeGoing() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1)
                .onUncaughtException(SchedulerConfig.PanicPolicy.LOG).build())) {
            CountDownLatch died = new CountDownLatch(1);
            rt.go(() -> {
                try {
                    throw new IllegalStateException("logged, not fatal");
                } finally {
                    died.countDown();
                }
            });
            assertTrue(died.await(10, TimeUnit.SECONDS));
            assertEquals(7, rt.run(() -> 7));
            assertEquals(7, rt.run(() -> 7));
        }
    }

    @Test
    void customHandlerRunsInTheFailingGoroutine() throws Exception {
        List<Throwable> seen = new CopyOnWriteArrayList<>();
        AtomicLong handlerGoid = new AtomicLong();
        CountDownLatch handled = new CountDownLatch(1);
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1)
                .onUncaughtException((carrier, e) -> {
                    handlerGoid.set(Go.goid());
                    seen.add(e);
                    handled.countDown();
                }).build())) {
            assertEquals(SchedulerConfig.PanicPolicy.LOG, rt.config().panicPolicy());
            AtomicLong failing = new AtomicLong();
            Error thrown = new AssertionError("handled");
            rt.go(() -> {
                failing.set(Go.goid());
                throw thrown;
            });
            assertTrue(handled.await(10, TimeUnit.SECONDS));
            assertEquals(List.of(thrown), seen);
            assertEquals(failing.get(), handlerGoid.get());
            assertEquals(3, rt.run(() -> 3));
        }
    }

    @Test
    void policyAndHandlerReplaceEachOther() {
        SchedulerConfig c = SchedulerConfig.builder().onUncaughtException((t, e) -> { })
                .onUncaughtException(SchedulerConfig.PanicPolicy.CRASH).build();
        assertEquals(SchedulerConfig.PanicPolicy.CRASH, c.panicPolicy());
        assertThat(c.uncaughtExceptionHandler()).isNull();
        assertThrows(NullPointerException.class,
                () -> SchedulerConfig.builder().onUncaughtException((SchedulerConfig.PanicPolicy) null));
        assertThrows(NullPointerException.class,
                () -> SchedulerConfig.builder().onUncaughtException((Thread.UncaughtExceptionHandler) null));
    }

    @Test
    void mainsOwnExceptionIsReturnedNotAPanic() throws Exception {
        try (GoRuntime rt = crashing(1)) {
            assertThrows(IllegalArgumentException.class, () -> rt.run(() -> { throw new IllegalArgumentException("main"); }));
            assertEquals(5, rt.run(() -> 5)); // the runtime lives on
        }
    }

    /** Go: runtime/crash_test.go TestPanicDeadlockGosched (a deferred call of the panicking goroutine yields). */
    @Test
    void testPanicDeadlockGosched() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            class ErrorThatGosched extends RuntimeException {
                ErrorThatGosched() {
                    super("errorThatGosched");
                }
            }
            GoroutinePanicException p = assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                Go.go(() -> {
                    try {
                        throw new ErrorThatGosched();
                    } finally {
                        rt.gomaxprocs(1);
                        Go.yield();
                    }
                });
                Chan.make().recv();
                return null;
            }));
            assertThat(p.getCause()).isInstanceOf(ErrorThatGosched.class);
        }
    }

    /** Go: runtime/crash_test.go TestPanicDeadlockSyscall (the same, with a syscall in the deferred call). */
    @Test
    void testPanicDeadlockSyscall() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            GoroutinePanicException p = assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                Go.go(() -> {
                    try {
                        throw new IllegalStateException("errorThatSyscall");
                    } finally {
                        try {
                            Go.syscall(() -> {
                                Thread.sleep(1);
                                return null;
                            });
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });
                Chan.make().recv();
                return null;
            }));
            assertThat(p.getCause()).hasMessage("errorThatSyscall");
        }
    }

    /** Go: runtime/crash_test.go TestGoexitDefer. */
    @Test
    void testGoexitDefer() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            AtomicBoolean caughtAsException = new AtomicBoolean();
            AtomicBoolean afterGoexit = new AtomicBoolean();
            rt.run(() -> {
                Chan<Boolean> c = Chan.make();
                Go.go(() -> {
                    try {
                        Go.goexit();
                        afterGoexit.set(true);
                    } catch (Exception e) { // a recover(): must see nothing
                        caughtAsException.set(true);
                    } finally {
                        c.send(true);
                    }
                });
                c.recv(); // if the finally block fails to run, this blocks for ever
                return null;
            });
            assertFalse(caughtAsException.get(), "catch (Exception) stopped Goexit");
            assertFalse(afterGoexit.get(), "Goexit returned");
            awaitNoGoroutines(rt); // the goroutine has ended all the way, through G.run
            assertFalse(rt.isShutdown(), "Goexit was taken for a panic");
            assertEquals(1, rt.run(() -> 1)); // Goexit is not a panic: the runtime lives on
        }
    }

    static void awaitNoGoroutines(GoRuntime rt) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (rt.stats().goroutines() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, rt.stats().goroutines());
    }

    /** Goexit ends the goroutine through every frame, running each frame's finally blocks. */
    @Test
    void goexitUnwindsEveryFrame() throws Exception {
        try (GoRuntime rt = crashing(1)) {
            List<String> ran = new CopyOnWriteArrayList<>();
            rt.run(() -> {
                WaitGroup wg = new WaitGroup();
                wg.go(() -> {
                    try (AutoCloseable ignored = () -> ran.add("close")) {
                        nested(ran, 3);
                    } catch (Exception e) {
                        ran.add("caught " + e);
                    }
                    ran.add("unreachable");
                });
                wg.await(); // WaitGroup.go counts a goroutine ended by Goexit as done
                return null;
            });
            assertEquals(List.of("finally 1", "finally 2", "finally 3", "close"), ran);
        }
    }

    private static void nested(List<String> ran, int depth) {
        try {
            if (depth == 1) {
                Go.goexit();
            } else {
                nested(ran, depth - 1);
            }
        } finally {
            ran.add("finally " + depth);
        }
    }

    /** Go: runtime/crash_test.go TestGoexitCrash ("no goroutines (main called runtime.Goexit) - deadlock!"). */
    @Test
    void testGoexitCrash() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            AtomicBoolean otherFinished = new AtomicBoolean();
            AtomicBoolean mainsFinally = new AtomicBoolean();
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> rt.run(() -> {
                Go.go(() -> {
                    Go.sleep(Duration.ofMillis(100));
                    otherFinished.set(true); // the program goes on after main's Goexit
                });
                try {
                    Go.goexit();
                } finally {
                    mainsFinally.set(true);
                }
                return null;
            }));
            assertThat(e).hasMessage("no goroutines (main called runtime.Goexit) - deadlock!");
            assertTrue(mainsFinally.get());
            assertTrue(otherFinished.get(), "run() returned before the other goroutines ended");
        }
    }

    /** Go: runtime/crash_test.go TestGoexitDeadlock: the others end, none is left. */
    @Test
    void testGoexitDeadlock() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> rt.run(() -> {
                for (int g = 0; g < 2; g++) {
                    Go.go(() -> {
                        for (int i = 0; i < 10; i++) {
                            Go.yield();
                        }
                    });
                }
                Go.goexit();
                return null;
            }));
            assertThat(e).isNotInstanceOf(DeadlockException.class)
                    .hasMessage("no goroutines (main called runtime.Goexit) - deadlock!");
        }
    }

    /**
     * Go's checkdead after main's Goexit, when goroutines are left but asleep for ever: "all
     * goroutines are asleep - deadlock!", not the no-goroutines message. One waits on a channel
     * nobody holds any more (the collector's proof), one in select {} (asleep whatever anyone holds).
     */
    @Test
    void goroutinesLeftAsleepForEverAfterMainsGoexitAreGosDeadlock() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            DeadlockException e = assertThrows(DeadlockException.class, () -> rt.run(() -> {
                Chan<Integer> orphan = Chan.make();
                Go.go(orphan::recv);
                Go.go(() -> Select.select()); // select {}
                Go.sleep(Duration.ofMillis(20)); // both parked before main goes
                Go.goexit();
                return null;
            }));
            assertThat(e.reason()).isEqualTo("all goroutines are asleep - deadlock!");
            assertThat(e.dump()).contains("[select (no cases)");
        }
    }

    /** A goroutine left waiting on a channel a platform thread still holds is no deadlock: it is woken. */
    @Test
    void aGoroutineLeftWaitingOnAChannelHeldOutsideIsNoDeadlockAfterMainsGoexit() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            Chan<Integer> held = Chan.make();
            AtomicInteger got = new AtomicInteger();
            Thread feeder = Thread.ofPlatform().start(() -> {
                LockSupport.parkNanos(Duration.ofMillis(800).toNanos()); // across the first collections
                held.sendAsync(7);
            });
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> rt.run(() -> {
                Go.go(() -> got.set(held.recv()));
                Go.goexit();
                return null;
            }));
            feeder.join();
            assertThat(e).isNotInstanceOf(DeadlockException.class)
                    .hasMessage("no goroutines (main called runtime.Goexit) - deadlock!");
            assertThat(got.get()).isEqualTo(7);
        }
    }

    /**
     * Go: runtime/crash_test.go TestGoexitInPanic: a panic raised while Goexit unwinds (here: a
     * finally block that throws) is a panic, and it ends the runtime.
     */
    @Test
    void testGoexitInPanic() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            RuntimeException thrown = new RuntimeException("hello");
            GoroutinePanicException p = assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                Go.go(() -> {
                    try {
                        Go.goexit();
                    } finally {
                        throw thrown;
                    }
                });
                Chan.make().recv();
                return null;
            }));
            assertSame(thrown, p.getCause());
        }
    }

    /**
     * Go: runtime/crash_test.go TestRecoverBeforePanicAfterGoexit: a deferred call that panics
     * during Goexit, recovered by an outer one, resumes the goroutine in the caller, as if the
     * Goexit never happened.
     */
    @Test
    void testRecoverBeforePanicAfterGoexit() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            AtomicInteger resumed = new AtomicInteger();
            rt.run(() -> {
                Chan<Boolean> done = Chan.make();
                Go.go(() -> {
                    try {
                        try {
                            Go.goexit();
                        } finally {
                            throw new IllegalStateException("hello"); // replaces the Goexit
                        }
                    } catch (IllegalStateException recovered) {
                        resumed.incrementAndGet();
                    }
                    resumed.incrementAndGet(); // execution resumes after the recovering frame
                    done.send(true);
                });
                done.recv();
                return null;
            });
            assertEquals(2, resumed.get());
            assertEquals(1, rt.run(() -> 1));
        }
    }

    /** Goexit from a platform thread is the same Error; nothing of a runtime is touched. */
    @Test
    void goexitIsAnErrorNotAnException() {
        Go.Goexit e = assertThrows(Go.Goexit.class, Go::goexit);
        assertThat((Throwable) e).isInstanceOf(Error.class).isNotInstanceOf(Exception.class);
    }

    /** WaitGroup.go re-raises f's exception (no done(): await does not return as if all went well). */
    @Test
    void waitGroupGoReraisesTheException() throws Exception {
        try (GoRuntime rt = crashing(2)) {
            IllegalStateException thrown = new IllegalStateException("from f");
            AtomicBoolean awaitReturned = new AtomicBoolean();
            GoroutinePanicException p = assertThrows(GoroutinePanicException.class, () -> rt.run(() -> {
                WaitGroup wg = new WaitGroup();
                wg.go(() -> { throw thrown; });
                wg.await();
                awaitReturned.set(true);
                return null;
            }));
            assertSame(thrown, p.getCause());
            assertFalse(awaitReturned.get());
        }
    }
}
