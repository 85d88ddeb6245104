package io.gosched.service.job;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;

import io.gosched.service.job.HeldJob.State;
import io.gosched.service.job.spi.JobRecord;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A held job's life is one state changed by {@link HeldJob#transition}: a move outside the
 * diagram is refused whatever the job's state, and the moves that race (a claim landing while the
 * store's watch reports a cancel or a later attempt, the node stopping meanwhile) never lose one
 * of the two. Each race runs its two sides on two platform threads released together, many rounds.
 */
class HeldJobTest {

    private static final String NODE = "n1";
    private static final int ROUNDS = 20_000;
    private static final JobRecord.Spec SPEC = new JobRecord.Spec(null, null, null, JobSpec.DEFAULT_PRIORITY, 1, 0, 1,
            Instant.EPOCH, null, null, null);

    private static HeldJob held() {
        JobSpec spec = new JobSpec(null, null, null, 0, JobSpec.DEFAULT_PRIORITY, null, JobSpec.RetryPolicy.NONE, null);
        return new HeldJob("j1", spec, SPEC, 1, null, null);
    }

    /** The job's record as the store's watch reports it: running attempt {@code attempt} under ticket 1. */
    private static JobRecord running(String node, int attempt, boolean cancelRequested) {
        JobRecord.Status s = JobRecord.Status.queued(Instant.EPOCH);
        for (int i = 0; i < attempt; i++) {
            s = s.claimed(node, Instant.EPOCH);
        }
        if (cancelRequested) {
            s = s.withCancelRequested();
        }
        return new JobRecord("j1", SPEC, s);
    }

    private static HeldJob in(State... path) {
        HeldJob j = held();
        State at = State.WAITING;
        for (State next : path) {
            assertThat(j.transition(at, next)).as("%s -> %s", at, next).isTrue();
            at = next;
        }
        return j;
    }

    @Test
    void everyMoveOutsideTheDiagramIsRefusedAndALegalOneOnlyFromItsState() {
        int refused = 0;
        for (State from : State.values()) {
            for (State to : State.values()) {
                if (from.canMoveTo(to)) {
                    continue;
                }
                HeldJob j = held();
                assertThatThrownBy(() -> j.transition(from, to)).as("%s -> %s", from, to)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining(from + " -> " + to);
                assertThat(j.state()).isEqualTo(State.WAITING);
                refused++;
            }
        }
        assertThat(refused).isGreaterThan(State.values().length * State.values().length / 2);
        assertThat(State.ENDED.canMoveTo(State.WAITING)).isFalse();

        HeldJob j = held();
        assertThat(j.transition(State.WAITING, State.CLAIMING)).isTrue();
        assertThat(j.transition(State.WAITING, State.CLAIMING)).as("no longer waiting").isFalse();
        assertThat(j.state()).isEqualTo(State.CLAIMING);
    }

    @Test
    void aClaimLandsOnceAndNotAfterTheJobEnded() {
        HeldJob j = in(State.CLAIMING);
        j.claimed(1, false);
        assertThat(j.state()).isEqualTo(State.RUNNING);
        assertThat(j.attempt).isEqualTo(1);
        assertThatThrownBy(() -> j.claimed(2, false)).isInstanceOf(IllegalStateException.class);
        assertThat(j.transition(State.RUNNING, State.ENDED)).isTrue();
        assertThatThrownBy(() -> j.claimFailed(false)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCancelSeenWhileTheClaimLandsIsNeverLost() throws Exception {
        JobRecord cancelled = running(NODE, 1, true);
        race(ROUNDS, () -> in(State.CLAIMING), j -> j.claimed(1, false), j -> j.changed(cancelled, NODE),
                j -> assertThat(j.state()).as("%s", j).isEqualTo(State.CANCELLING));
    }

    @Test
    void aLaterAttemptElsewhereFencesARunningJobWhateverItsCancel() throws Exception {
        JobRecord cancelled = running(NODE, 1, true);
        JobRecord takenOver = running("n2", 2, false);
        race(ROUNDS, () -> {
            HeldJob j = in(State.CLAIMING);
            j.claimed(1, false);
            return j;
        }, j -> j.changed(cancelled, NODE), j -> j.changed(takenOver, NODE),
                j -> assertThat(j.state()).as("%s", j).isEqualTo(State.FENCED));
    }

    @Test
    void aNodeThatStopsWhileTheClaimLandsLeavesTheJobAbandoned() throws Exception {
        race(ROUNDS, () -> in(State.CLAIMING), j -> j.claimed(1, ThreadLocalRandom.current().nextBoolean()),
                j -> assertThat(j.abandon()).isTrue(),
                j -> assertThat(j.state()).as("%s", j).isEqualTo(State.ABANDONED));
    }

    @Test
    void aClaimThatFailsWhileTheNodeStopsEndsAbandonedOrDroppedNeverBoth() throws Exception {
        race(ROUNDS, () -> in(State.CLAIMING), j -> j.claimFailed(false), HeldJob::abandon,
                j -> assertThat(j.state()).as("%s", j).isIn(State.ABANDONED, State.DROPPED));
    }

    interface Side {
        void run(HeldJob j) throws Exception;
    }

    interface Fresh {
        HeldJob make();
    }

    /** Runs {@code a} and {@code b} on the same fresh job from two threads released together, {@code rounds} times; checks {@code after} each round. */
    private static void race(int rounds, Fresh fresh, Side a, Side b, Side after) throws Exception {
        CyclicBarrier start = new CyclicBarrier(2);
        CyclicBarrier end = new CyclicBarrier(2);
        HeldJob[] job = new HeldJob[1];
        List<Throwable> failures = new ArrayList<>();
        Thread other = Thread.ofPlatform().name("held-job-race").start(() -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    start.await();
                    b.run(job[0]);
                    end.await();
                }
            } catch (Throwable t) {
                synchronized (failures) {
                    failures.add(t);
                }
                start.reset();
                end.reset();
            }
        });
        try {
            for (int r = 0; r < rounds; r++) {
                job[0] = fresh.make(); // published to the other thread by the barrier
                start.await();
                a.run(job[0]);
                end.await();
                after.run(job[0]);
            }
        } catch (BrokenBarrierException e) {
            // the other side failed: its failure is reported below
        } finally {
            other.interrupt();
            other.join();
        }
        synchronized (failures) {
            if (!failures.isEmpty()) {
                throw new AssertionError("the other side of the race failed", failures.getFirst());
            }
        }
    }
}
