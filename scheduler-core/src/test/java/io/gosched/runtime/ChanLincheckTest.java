package io.gosched.runtime;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.junit.jupiter.api.Test;

/**
 * Lincheck on the non-blocking channel operations (trySend, tryRecv, close, len) of an unbuffered,
 * a 1-slot and a 2-slot channel, in model-checking and stress mode. The sequential specification is
 * the channel itself run on one thread (Lincheck's default), so a lock-free fast path that answered
 * "would block" or "closed" at a moment when that was never true is reported as a non-linearizable
 * history. Two actors per thread (not more): with fewer operations per scenario the model checker
 * reaches the interesting close/send/receive interleavings in far fewer iterations (checked: with
 * the recv fast path's second empty() check removed, the buffered model-checking runs fail).
 */
class ChanLincheckTest {

    abstract static class ChanOps {
        final Chan<Integer> c;

        ChanOps(int cap) {
            c = Chan.make(cap);
        }

        @Operation
        public String trySend(@Param(gen = IntGen.class, conf = "1:3") int v) {
            try {
                return c.trySend(v) ? "sent" : "full";
            } catch (ChanClosedException e) {
                return "closed";
            }
        }

        @Operation
        public String tryRecv() {
            Received<Integer> r = c.tryRecv();
            return r == null ? "empty" : r.ok() ? "v" + r.value() : "closed";
        }

        @Operation
        public String close() {
            try {
                c.close();
                return "ok";
            } catch (ChanClosedException e) {
                return "already";
            }
        }

        @Operation
        public int len() {
            return c.len();
        }
    }

    public static class Unbuffered extends ChanOps {
        public Unbuffered() {
            super(0);
        }
    }

    public static class OneSlot extends ChanOps {
        public OneSlot() {
            super(1);
        }
    }

    public static class TwoSlots extends ChanOps {
        public TwoSlots() {
            super(2);
        }
    }

    private static ModelCheckingOptions modelChecking() {
        return new ModelCheckingOptions().iterations(20 * GoTesting.STRESS).invocationsPerIteration(100)
                .threads(3).actorsPerThread(2);
    }

    private static StressOptions stress() {
        return new StressOptions().iterations(5 * GoTesting.STRESS).invocationsPerIteration(500)
                .threads(3).actorsPerThread(2);
    }

    @Test
    void unbufferedModelChecking() {
        modelChecking().check(Unbuffered.class);
    }

    @Test
    void oneSlotModelChecking() {
        modelChecking().check(OneSlot.class);
    }

    @Test
    void twoSlotsModelChecking() {
        modelChecking().check(TwoSlots.class);
    }

    @Test
    void unbufferedStress() {
        stress().check(Unbuffered.class);
    }

    @Test
    void oneSlotStress() {
        stress().check(OneSlot.class);
    }

    @Test
    void twoSlotsStress() {
        stress().check(TwoSlots.class);
    }
}
