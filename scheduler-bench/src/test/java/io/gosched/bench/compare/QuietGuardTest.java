package io.gosched.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.bench.compare.QuietGuard.Verdict;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import org.junit.jupiter.api.Test;

/** The quiet-machine rule: which runs are refused, which are marked noisy, how long it waits. */
class QuietGuardTest {

    @Test
    void readsTheOneMinuteAverageOfProcLoadavg() {
        assertThat(QuietGuard.oneMinute("0.42 1.10 2.00 3/456 7890\n")).isEqualTo(0.42);
        assertThat(QuietGuard.oneMinute("? ? ?")).isNaN();
        assertThat(QuietGuard.oneMinute("")).isNaN();
    }

    @Test
    void aFullRunAboveTheLimitIsRefusedUnlessNoisyIsAllowed() {
        assertThat(QuietGuard.verdict(1.01, 1.0, false, false)).isEqualTo(Verdict.REFUSE);
        assertThat(QuietGuard.verdict(1.01, 1.0, false, true)).isEqualTo(Verdict.NOISY);
    }

    @Test
    void aQuickRunAboveTheLimitIsMarkedNotRefused() {
        assertThat(QuietGuard.verdict(5.0, 1.0, true, false)).isEqualTo(Verdict.NOISY);
    }

    @Test
    void exactlyAtTheLimitIsQuiet() {
        assertThat(QuietGuard.verdict(1.0, 1.0, false, false)).isEqualTo(Verdict.QUIET);
        assertThat(QuietGuard.verdict(0.2, 1.0, true, false)).isEqualTo(Verdict.QUIET);
    }

    @Test
    void anUnknownLoadIsNeverQuiet() {
        assertThat(QuietGuard.verdict(Double.NaN, 1.0, false, false)).isEqualTo(Verdict.REFUSE);
        assertThat(QuietGuard.verdict(Double.NaN, 1.0, true, false)).isEqualTo(Verdict.NOISY);
    }

    @Test
    void waitsUntilTheLoadFallsAndNoLonger() {
        Queue<String> readings = new ArrayDeque<>(List.of("2.5 0 0", "1.7 0 0", "0.9 0 0", "0.1 0 0"));
        List<Long> slept = new ArrayList<>();
        double load = QuietGuard.waitForQuiet(readings::remove, 1.0, 120, 5, slept::add);
        assertThat(load).isEqualTo(0.9);
        assertThat(slept).containsExactly(5L, 5L);
        assertThat(readings).containsExactly("0.1 0 0");
    }

    @Test
    void givesUpAfterTheWaitAndReturnsTheLastReading() {
        List<Long> slept = new ArrayList<>();
        double load = QuietGuard.waitForQuiet(() -> "3.0 0 0", 1.0, 12, 5, slept::add);
        assertThat(load).isEqualTo(3.0);
        assertThat(slept).containsExactly(5L, 5L, 5L);
    }

    @Test
    void doesNotWaitWhenQuietOrWhenTheWaitIsZero() {
        List<Long> slept = new ArrayList<>();
        assertThat(QuietGuard.waitForQuiet(() -> "0.5 0 0", 1.0, 120, 5, slept::add)).isEqualTo(0.5);
        assertThat(QuietGuard.waitForQuiet(() -> "9.0 0 0", 1.0, 0, 5, slept::add)).isEqualTo(9.0);
        assertThat(slept).isEmpty();
    }

    @Test
    void theNoisyNoteNamesTheLoadAndTheLimit() {
        assertThat(QuietGuard.noisyNote(Verdict.NOISY, 4.58, 1.0)).contains("**NOISY**", "4.58", "1.00", "not for the README");
        assertThat(QuietGuard.noisyNote(Verdict.QUIET, 0.5, 1.0)).isEmpty();
        assertThat(QuietGuard.refusal(4.58, 1.0, 120)).contains("4.58", "--allow-noisy", "--max-load", "--wait-quiet");
    }

    @Test
    void stealIsTheHypervisorsShareOfTheCpuTimeBetweenTwoReadings() {
        long[] before = QuietGuard.cpuTimes("cpu  100 0 50 800 10 0 5 40 0 0\ncpu0 50 0 25 400 5 0 2 20 0 0\n");
        long[] after = QuietGuard.cpuTimes("cpu  160 0 60 900 10 0 5 70 0 0\n");
        // 60 user + 10 system + 100 idle + 30 steal = 200 ticks, 30 of them stolen.
        assertThat(QuietGuard.stealShare(before, after)).isEqualTo(0.15);
    }

    @Test
    void anUnreadableOrUnchangedProcStatGivesNoStealFigure() {
        assertThat(QuietGuard.cpuTimes(null)).isNull();
        assertThat(QuietGuard.cpuTimes("intr 1 2 3\n")).isNull();
        assertThat(QuietGuard.cpuTimes("cpu 1 2 3\n")).isNull(); // a kernel too old to count steal
        long[] t = QuietGuard.cpuTimes("cpu  1 2 3 4 5 6 7 8\n");
        assertThat(QuietGuard.stealShare(null, t)).isNaN();
        assertThat(QuietGuard.stealShare(t, t)).isNaN();
    }

    @Test
    void theStealLineGivesTheWholeRunAndTheRoundsRange() {
        assertThat(QuietGuard.stealNote(0.061, List.of(0.03, Double.NaN, 0.162)))
                .contains("the load average does not count it", "6.1% over the measured rounds, 3.0–16.2% per round");
        assertThat(QuietGuard.stealNote(Double.NaN, List.of())).contains("unknown (no /proc/stat)");
    }
}
