package io.gosched.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The vCPU speed line of the comparison's report: what it measures and how it reads. */
class VcpuSpeedTest {

    @Test
    void theSpreadIsTheSlowestVcpuOverTheFastest() {
        assertThat(VcpuSpeed.spread(new double[] {0.112, 0.182})).isCloseTo(1.625, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(VcpuSpeed.spread(new double[] {0.2, 0.1, 0.15})).isEqualTo(2.0);
        assertThat(VcpuSpeed.spread(new double[] {0.1, 0.1})).isEqualTo(1.0);
    }

    @Test
    void aMissingOrBrokenMeasureHasNoSpread() {
        assertThat(VcpuSpeed.spread(null)).isNaN();
        assertThat(VcpuSpeed.spread(new double[0])).isNaN();
        assertThat(VcpuSpeed.spread(new double[] {0.1, 0.0})).isNaN();
    }

    @Test
    void theNoteGivesTheRangeAndCountsTheUnevenRoundsSkippingUnknownOnes() {
        assertThat(VcpuSpeed.note(List.of(1.02, Double.NaN, 1.85, 1.31, 1.29)))
                .contains("slowest/fastest 1.02–1.85 per round; 2 of 4 rounds above 1.3");
        assertThat(VcpuSpeed.note(List.of(Double.NaN))).contains("unknown");
        assertThat(VcpuSpeed.note(List.of())).contains("unknown");
    }

    @Test
    void aRunWithMostRoundsUnevenIsMarkedNotForTheReadme() {
        assertThat(VcpuSpeed.unevenWarning(List.of(1.08, 1.45, 1.69, 1.31, 1.5)))
                .contains("**UNEVEN vCPUs**: in 4 of 5 measured rounds", "up to 1.69x", "not for the README");
        assertThat(VcpuSpeed.unevenWarning(List.of(1.08, 1.45, Double.NaN, 1.1))).as("one of three known").isEmpty();
        assertThat(VcpuSpeed.unevenWarning(List.of(1.4, 1.0))).as("half is not most").isEmpty();
        assertThat(VcpuSpeed.unevenWarning(List.of())).isEmpty();
    }

    @Test
    void everyVcpuOfThisMachineIsTimedWhereTasksetExists() {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/taskset")), "taskset (util-linux) is not installed");
        int cpus = Runtime.getRuntime().availableProcessors();
        double[] s = VcpuSpeed.measure(cpus);
        assertThat(s).as("one time per vCPU").hasSize(cpus);
        for (double x : s) {
            assertThat(x).as("seconds of the shell loop").isGreaterThan(0.0).isLessThan(10.0);
        }
        assertThat(VcpuSpeed.spread(s)).isGreaterThanOrEqualTo(1.0);
    }
}
