package io.gosched.runtime;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Lincheck on Sema's non-blocking operations (tryAcquire, release with and without handoff,
 * available). Blocking acquire is covered by {@link SemaTest}: Lincheck's sequential specification
 * cannot express an operation that waits for another thread.
 */
class SemaLincheckTest {

    public static class SemaOps {
        private final Sema s = new Sema(1);

        @Operation
        public boolean tryAcquire() {
            return s.tryAcquire();
        }

        @Operation
        public void release() {
            s.release();
        }

        @Operation
        public void releaseHandoff() {
            s.release(true);
        }

        @Operation
        public int available() {
            return s.available();
        }
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions().iterations(5 * GoTesting.STRESS).invocationsPerIteration(200)
                .threads(3).actorsPerThread(3).check(SemaOps.class);
    }

    @Test
    void stress() {
        new StressOptions().iterations(5 * GoTesting.STRESS).invocationsPerIteration(500)
                .threads(3).actorsPerThread(3).check(SemaOps.class);
    }
}
