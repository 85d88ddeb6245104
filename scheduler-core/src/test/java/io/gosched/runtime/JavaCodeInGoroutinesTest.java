package io.gosched.runtime;

import static io.gosched.runtime.GoTesting.STRESS;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ordinary Java code in goroutines that migrate between Ms, under the project's default launch
 * (the tests' argLine, as every launch script): {@code Thread.currentThread()} must name the M
 * the code runs on right now, also in code C2 compiled with the goroutine's parks inside (see
 * "The current thread" in M). Each test runs 4 goroutines on 2 Ps, so they keep migrating, and
 * long enough for C2 to compile the loop (the failures appeared within 2 s without the option).
 */
@Timeout(180)
class JavaCodeInGoroutinesTest {

    private static final int GOROUTINES = 4;
    private static final int ITERATIONS = 300_000 * STRESS;

    private static GoRuntime runtime() {
        return GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).shutdownTimeout(Duration.ofSeconds(2)).build());
    }

    /** The M the calling goroutine is mounted on, as the scheduler knows it (never cached by C2). */
    private static Thread actualM() {
        return Scheduler.getg().m;
    }

    /**
     * A ReentrantLock taken and released within one turn, then Go.yield outside the lock: with a
     * stale current thread, unlock throws IllegalMonitorStateException, two goroutines get in at
     * once, the lock leaks and goroutines hang in lock().
     */
    @Test
    void reentrantLockReleasedBeforeEachYield() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(GOROUTINES);
        long[] counter = new long[1];
        try (GoRuntime rt = runtime()) {
            for (int g = 0; g < GOROUTINES; g++) {
                rt.go(() -> {
                    try {
                        for (int i = 0; i < ITERATIONS; i++) {
                            lock.lock();
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                counter[0]++;
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                            Go.yield();
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    } finally {
                        done.countDown();
                    }
                });
            }
            boolean finished = done.await(60, TimeUnit.SECONDS);
            assertThat(errors).as("exceptions thrown by lock/unlock").isEmpty();
            assertThat(finished).as("all goroutines finished (%d still in the loop)", done.getCount()).isTrue();
            assertThat(overlaps.get()).as("times two goroutines held the lock at once").isZero();
            assertThat(lock.isLocked()).as("lock leaked").isFalse();
            assertThat(counter[0]).isEqualTo((long) GOROUTINES * ITERATIONS);
        }
    }

    /** A per-thread counter as caches keep them: one unsynchronised object per M. */
    private static final class PerM {
        final Thread owner = Thread.currentThread();
        long count;
    }

    /**
     * A ThreadLocal holding per-M state (Jackson's buffer recyclers, MDC, date-format caches):
     * every get must return the state of the M the goroutine runs on, or two Ms share one
     * unsynchronised object.
     */
    @Test
    void threadLocalStateBelongsToTheCurrentM() throws Exception {
        ThreadLocal<PerM> local = ThreadLocal.withInitial(PerM::new);
        AtomicLong foreign = new AtomicLong();
        AtomicLong staleThread = new AtomicLong();
        List<PerM> all = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(GOROUTINES);
        try (GoRuntime rt = runtime()) {
            for (int g = 0; g < GOROUTINES; g++) {
                rt.go(() -> {
                    try {
                        for (int i = 0; i < ITERATIONS; i++) {
                            PerM mine = local.get();
                            if (mine.count == 0 && !all.contains(mine)) {
                                all.add(mine);
                            }
                            Thread m = actualM();
                            if (mine.owner != m) {
                                foreign.incrementAndGet();
                            }
                            if (Thread.currentThread() != m) {
                                staleThread.incrementAndGet();
                            }
                            mine.count++;
                            Go.yield();
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    } finally {
                        done.countDown();
                    }
                });
            }
            assertThat(done.await(60, TimeUnit.SECONDS)).as("goroutines finished").isTrue();
            assertThat(errors).isEmpty();
            assertThat(staleThread.get()).as("Thread.currentThread() named another M").isZero();
            assertThat(foreign.get()).as("ThreadLocal.get() returned another M's state").isZero();
        }
    }

    /**
     * A log call before and after a park, as any service makes: java.util.logging records the
     * caller's thread id, a pattern layout prints the thread's name (logback's %thread), and
     * PrintStream, like loggers' appenders, takes a ReentrantLock per write.
     */
    @Test
    void loggingBeforeAndAfterAPark() throws Exception {
        AtomicLong wrongThreadId = new AtomicLong();
        AtomicLong wrongThreadName = new AtomicLong();
        AtomicLong records = new AtomicLong();
        Logger logger = Logger.getAnonymousLogger();
        logger.setUseParentHandlers(false);
        logger.setLevel(Level.INFO);
        logger.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.incrementAndGet();
                if (r.getLongThreadID() != actualM().threadId()) {
                    wrongThreadId.incrementAndGet();
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        PrintStream out = new PrintStream(new ByteArrayOutputStream() {
            @Override
            public synchronized void write(byte[] b, int off, int len) {
                // discard: only the caller's side of printing is under test
            }
        }, false, StandardCharsets.UTF_8);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        int n = ITERATIONS / 2;
        CountDownLatch done = new CountDownLatch(GOROUTINES);
        try (GoRuntime rt = runtime()) {
            Chan<Integer> ping = Chan.make();
            for (int g = 0; g < GOROUTINES; g++) {
                boolean sender = g % 2 == 0;
                rt.go(() -> {
                    try {
                        for (int i = 0; i < n; i++) {
                            logger.info("before");
                            String thread = Thread.currentThread().getName(); // a layout's %thread
                            if (!thread.equals(actualM().getName())) {
                                wrongThreadName.incrementAndGet();
                            }
                            out.println("[" + thread + "] before");
                            if (sender) {
                                ping.send(i);
                            } else {
                                ping.recv();
                            }
                            logger.info("after");
                            thread = Thread.currentThread().getName();
                            if (!thread.equals(actualM().getName())) {
                                wrongThreadName.incrementAndGet();
                            }
                            out.println("[" + thread + "] after");
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    } finally {
                        done.countDown();
                    }
                });
            }
            boolean finished = done.await(60, TimeUnit.SECONDS);
            assertThat(errors).as("exceptions from logging or printing").isEmpty();
            assertThat(finished).as("goroutines finished").isTrue();
            assertThat(records.get()).isEqualTo(2L * GOROUTINES * n);
            assertThat(wrongThreadId.get()).as("log records naming another M's thread").isZero();
            assertThat(wrongThreadName.get()).as("log lines naming another M's thread").isZero();
        }
    }
}
