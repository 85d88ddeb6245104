package io.gosched.sync;

import static io.gosched.runtime.GoTesting.STRESS;
import static io.gosched.runtime.GoTesting.await;
import static io.gosched.runtime.GoTesting.spawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.runtime.Chan;
import io.gosched.runtime.GoTesting.Mode;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ports of Go's sync/rwmutex_test.go intent. */
class RWMutexTest {

    /** Go: TestParallelReaders. Readers hold the read lock at the same time. */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testParallelReaders(Mode mode) throws Exception {
        mode.run(4, () -> {
            RWMutex m = new RWMutex();
            int n = 4;
            Chan<Boolean> locked = Chan.make(n);
            Chan<Boolean> release = Chan.make(n);
            Chan<Boolean> done = Chan.make(n);
            for (int i = 0; i < n; i++) {
                spawn(() -> {
                    m.rlock();
                    locked.send(true);
                    release.recv();
                    m.runlock();
                    done.send(true);
                });
            }
            for (int i = 0; i < n; i++) {
                locked.recv(); // all n hold the read lock together
            }
            assertThat(m.tryLock()).as("writer while readers hold (%s)", mode).isFalse();
            for (int i = 0; i < n; i++) {
                release.send(true);
            }
            for (int i = 0; i < n; i++) {
                done.recv();
            }
            assertThat(m.tryLock()).as("writer after readers left (%s)", mode).isTrue();
            assertThat(m.tryRLock()).as("reader while writer holds (%s)", mode).isFalse();
            m.unlock();
        });
    }

    /** Go: HammerRWMutex. activity: readers add 1 (must see no writer), writers add 10000 (must be alone). */
    @ParameterizedTest
    @EnumSource(Mode.class)
    void testRWMutexHammer(Mode mode) throws Exception {
        AtomicInteger activity = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        int readers = 6;
        int writers = 2;
        int iters = 500 * STRESS;
        mode.run(4, () -> {
            RWMutex rw = new RWMutex();
            Chan<Boolean> done = Chan.make(readers + writers);
            for (int r = 0; r < readers; r++) {
                spawn(() -> {
                    for (int i = 0; i < iters; i++) {
                        rw.rlock();
                        int n = activity.incrementAndGet();
                        if (n < 1 || n >= 10000) {
                            violations.incrementAndGet();
                        }
                        for (int k = 0; k < 50; k++) {
                            Thread.onSpinWait();
                        }
                        activity.decrementAndGet();
                        rw.runlock();
                    }
                    done.send(true);
                });
            }
            for (int w = 0; w < writers; w++) {
                spawn(() -> {
                    for (int i = 0; i < iters; i++) {
                        rw.lock();
                        int n = activity.addAndGet(10000);
                        if (n != 10000) {
                            violations.incrementAndGet();
                        }
                        for (int k = 0; k < 50; k++) {
                            Thread.onSpinWait();
                        }
                        activity.addAndGet(-10000);
                        rw.unlock();
                    }
                    done.send(true);
                });
            }
            for (int i = 0; i < readers + writers; i++) {
                done.recv();
            }
        });
        assertThat(violations.get()).as("exclusion violations (%s)", mode).isZero();
        assertThat(activity.get()).isZero();
    }

    /** A pending writer blocks new readers (Go's writer preference). */
    @Test
    void pendingWriterBlocksNewReaders() throws Exception {
        RWMutex rw = new RWMutex();
        rw.rlock();
        AtomicBoolean writerIn = new AtomicBoolean();
        AtomicBoolean lateReaderIn = new AtomicBoolean();
        Thread writer = Thread.ofPlatform().start(() -> {
            rw.lock();
            writerIn.set(true);
            rw.unlock();
        });
        await("writer pending", () -> {
            if (rw.tryRLock()) { // no writer announced yet: give the probe's read lock back
                rw.runlock();
                return false;
            }
            return true;
        });
        Thread reader = Thread.ofPlatform().start(() -> {
            rw.rlock();
            lateReaderIn.set(true);
            rw.runlock();
        });
        Thread.sleep(20);
        assertThat(writerIn.get() || lateReaderIn.get()).as("writer or late reader entered while the first reader holds").isFalse();
        rw.runlock();
        writer.join(10_000);
        reader.join(10_000);
        assertThat(writerIn.get()).isTrue();
        assertThat(lateReaderIn.get()).isTrue();
    }

    /** Go: TestRWMutexMisuse (fatal in Go; IllegalStateException here). */
    @Test
    void testRWMutexMisuse() {
        RWMutex rw = new RWMutex();
        assertThatThrownBy(rw::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("Unlock of unlocked RWMutex");
        assertThatThrownBy(rw::runlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("RUnlock of unlocked RWMutex");
        rw.lock();
        rw.unlock();
        rw.rlock();
        rw.runlock();
    }
}
