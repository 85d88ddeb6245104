package io.gosched.runtime;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * The local run queue with thieves that steal {@code runnext} too (runqsteal's last pass), on a
 * 4-slot ring. {@code RunQueueLincheckTest} checks linearizability without runnext stealing; with
 * it, the queue is not linearizable to "ring first" by design (a thief that saw the ring empty may
 * take runnext after the owner refilled the ring; Go accepts that, see that class), so here the
 * operations hand their Gs to a ledger instead of returning them, and what is checked after every
 * interleaving Lincheck explores is the property the scheduler relies on: every G put is taken
 * exactly once — by the owner, by a thief, or still in the queue — none lost, none twice.
 * runnext's holder is replaced at every fill of an empty runnext (the runtime does it every
 * 4,096), so thieves race the replacement in every scenario that fills runnext.
 */
public class RunQueueRunnextLincheckTest {

    /** More than any scenario creates: at most one G per operation. */
    private static final int MAX_IDS = 64;

    private final RunQueue q = new RunQueue(4, 1);
    private int nextId;
    /** Which Gs entered the queue, by id (written by the owner only). */
    private final boolean[] put = new boolean[MAX_IDS];
    /**
     * How many times each G was taken out, by anyone, indexed by id. One atomic add per take: a
     * concurrent collection here would add its own interleavings for the model checker to explore.
     */
    private final AtomicIntegerArray taken = new AtomicIntegerArray(MAX_IDS);

    private G newG() {
        G g = new G(null);
        g.goid = nextId++;
        return g;
    }

    /** runqput(next=false); a full ring refuses (the runtime would spill to the global queue). */
    @Operation(nonParallelGroup = "owner")
    public void put() {
        G g = newG();
        if (q.putTail(g)) {
            put[(int) g.goid] = true;
        }
    }

    /** runqput(next=true): the G kicked out of runnext goes to the tail, or is taken here when the ring is full. */
    @Operation(nonParallelGroup = "owner")
    public void putNext() {
        G g = newG();
        put[(int) g.goid] = true;
        G kicked = q.putNext(g);
        if (kicked != null && !q.putTail(kicked)) {
            taken.incrementAndGet((int) kicked.goid); // the runtime would spill it to the global queue: out of this queue once
        }
    }

    /** runqget: runnext first, then the ring. */
    @Operation(nonParallelGroup = "owner")
    public void get() {
        G g = q.getNext();
        if (g == null) {
            g = q.getRing();
        }
        if (g != null) {
            taken.incrementAndGet((int) g.goid);
        }
    }

    /** runqsteal on the last pass: the ring, or runnext when the ring is empty. */
    @Operation
    public void steal() {
        RunQueue thief = new RunQueue(4);
        G g = thief.steal(q, true, false).gp();
        if (g != null) {
            taken.incrementAndGet((int) g.goid);
            for (G x; (x = thief.getRing()) != null; ) {
                taken.incrementAndGet((int) x.goid);
            }
        }
    }

    /** After the operations: drain what is left; then every G put was taken exactly once. */
    @Validate
    public void everyGTakenExactlyOnce() {
        for (G g; (g = q.getNext()) != null || (g = q.getRing()) != null; ) {
            taken.incrementAndGet((int) g.goid);
        }
        for (int id = 0; id < MAX_IDS; id++) {
            int times = taken.get(id);
            int expected = put[id] ? 1 : 0;
            if (times != expected) {
                throw new IllegalStateException("G " + id + " was taken " + times + " times, expected " + expected);
            }
        }
    }

    /**
     * 20 scenarios of 500 interleavings each. With 30 this test took 100-150 s of the CI's 25
     * minutes on the 2-core box (a slow host day doubled it); the ring and runnext code it
     * checks is small, and the stress test below still runs 30 scenarios on real threads.
     */
    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(500)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(3)
                .check(RunQueueRunnextLincheckTest.class);
    }

    @Test
    void stress() {
        new StressOptions()
                .iterations(30)
                .invocationsPerIteration(2_000)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(3)
                .check(RunQueueRunnextLincheckTest.class);
    }
}
