package io.gosched.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The table the comparison writes: the noisy mark, each number with its spread, the new rows' labels. */
class CompareReportTest {

    private static Map<Compare.Key, Compare.Cell> cells(Compare.Options o, Map<String, List<Result>> byPeer) {
        Map<Compare.Key, Compare.Cell> cells = new LinkedHashMap<>();
        for (BenchWorkload w : o.workloads) {
            for (String p : o.peers) {
                Compare.Cell c = new Compare.Cell();
                List<Result> rs = byPeer.getOrDefault(p, List.of());
                for (int r = 0; r < rs.size(); r++) c.add(r, rs.get(r));
                cells.put(new Compare.Key(w, p), c);
            }
        }
        return cells;
    }

    private static Result parked(double heap, double rss) {
        return Result.parse("check=1 heap_b=" + heap + " rss_b=" + rss);
    }

    private static String report(QuietGuard.Verdict verdict, Map<String, List<Result>> byPeer) {
        Compare.Options o = Compare.parse(new String[] {"--workloads", "parked", "--peers", "gosched,vt", "--quick"});
        return Compare.report(o, cells(o, byPeer), Map.of(), "4.58 3.00 2.00 1/2 3", "4.00 3.00 2.00 1/2 3",
                4.0, 5.0, 0.05, List.of(0.02, 0.08), List.of(1.05, 1.62, Double.NaN), 1.0, verdict);
    }

    @Test
    void aNoisyRunSaysSoInItsTitleAndHeader() {
        String md = report(QuietGuard.Verdict.NOISY, Map.of());
        assertThat(md.lines().findFirst().orElseThrow()).endsWith("(NOISY)");
        assertThat(md).contains("> **NOISY**: the 1-minute load average was 4.58 at the start, above 1.00");
        assertThat(md).contains("- Host CPU steal", "5.0% over the measured rounds, 2.0–8.0% per round");
        assertThat(md).contains("- vCPU speed", "slowest/fastest 1.05–1.62 per round; 1 of 2 rounds above 1.3");
        assertThat(md).as("one uneven round of two is not most").doesNotContain("UNEVEN");
    }

    @Test
    void aQuietRunHasNoNoisyMark() {
        assertThat(report(QuietGuard.Verdict.QUIET, Map.of())).doesNotContain("NOISY");
    }

    @Test
    void everyCellShowsItsMedianWithItsSpreadAndTheRatioIsThatOfEachRound() {
        String md = report(QuietGuard.Verdict.QUIET, Map.of(
                "gosched", List.of(parked(800, 900), parked(820, 950), parked(760, 1000)),
                "vt", List.of(parked(1600, 1800), parked(1600, 1800))));
        // gosched heap: median 800, farthest round 760 -> 5 %; vt: two equal rounds -> 0 %.
        // Ratios of the two rounds both peers have: 1600/800 = 2.00 and 1600/820 = 1.95.
        assertThat(md).contains("| parked | heap after GC, B per parked goroutine | 800 ±5% | 1600 ±0% | 1.98 (1.95–2.00) |");
        assertThat(md).contains("| parked | RSS, B per parked goroutine | 950 ±5% | 1800 ±0% | 1.95 (1.89–2.00) |");
        assertThat(md).contains("fresh peer process", "-Xms=-Xmx=4g", "MemoryMXBean", "HeapInuse+StackInuse",
                "after 3 warm-up passes", "RSS less one taken at the start of the process");
    }

    @Test
    void aRoundWhereTheWholeMachineRanFasterDoesNotMoveTheRatio() {
        Compare.Cell g = new Compare.Cell(), vt = new Compare.Cell();
        double[][] rounds = {{800, 480}, {760, 470}, {900, 560}, {820, 500}, {330, 235}}; // gosched, vt; round 4 all fast
        for (int r = 0; r < rounds.length; r++) {
            g.add(r, Result.parse("check=1 ns_op=" + rounds[r][0]));
            vt.add(r, Result.parse("check=1 ns_op=" + rounds[r][1]));
        }
        // The medians' ratio would be 480/800 = 0.60; the rounds' own ratios are 0.60, 0.62, 0.62, 0.61, 0.71.
        assertThat(Compare.pairedRatio(vt, g, "ns_op")).isEqualTo("0.62 (0.60–0.71)");
        // A round one peer failed is left out, not paired with another round.
        Compare.Cell partial = new Compare.Cell();
        partial.add(1, Result.parse("check=1 ns_op=380"));
        partial.add(3, Result.parse("check=1 ns_op=410"));
        assertThat(Compare.pairedRatio(partial, g, "ns_op")).isEqualTo("0.50 (0.50–0.50)");
        Compare.Cell zero = new Compare.Cell();
        zero.add(0, Result.parse("check=1 ns_op=0"));
        assertThat(Compare.pairedRatio(vt, zero, "ns_op")).isEqualTo("∞");
        Compare.Cell mostlyZero = new Compare.Cell(); // a hog's p50: 0 but for one round of a few ns
        for (int r = 0; r < 5; r++) mostlyZero.add(r, Result.parse("check=1 ns_op=" + (r == 2 ? 0.00006 : 0)));
        assertThat(Compare.pairedRatio(vt, mostlyZero, "ns_op")).isEqualTo("∞");
        assertThat(Compare.pairedRatio(vt, new Compare.Cell(), "ns_op")).isEqualTo("—");
    }

    @Test
    void spreadIsTheFarthestRoundFromTheMedian() {
        assertThat(Compare.spread(List.of(100.0, 110.0, 70.0))).isEqualTo(0.30);
        assertThat(Compare.spread(List.of(100.0))).isNaN();
        assertThat(Compare.withSpread(List.of(100.0))).isEqualTo("100");
        assertThat(Compare.withSpread(List.of(2.0, 2.5, 1.5))).isEqualTo("2.00 ±25%");
    }

    @Test
    void theGuardOptionsParseAndTheWaitDefaultsDependOnQuick() {
        Compare.Options full = Compare.parse(new String[0]);
        assertThat(full.maxLoad).isEqualTo(1.0);
        assertThat(full.waitQuietSeconds).isEqualTo(120);
        assertThat(full.allowNoisy).isFalse();
        assertThat(Compare.parse(new String[] {"--quick"}).waitQuietSeconds).isZero();
        Compare.Options set = Compare.parse(new String[] {"--max-load", "1.5", "--wait-quiet", "30", "--allow-noisy",
                "--parked-heap", "6g"});
        assertThat(set.maxLoad).isEqualTo(1.5);
        assertThat(set.waitQuietSeconds).isEqualTo(30);
        assertThat(set.allowNoisy).isTrue();
        assertThat(set.parkedHeap).isEqualTo("6g");
        assertThatThrownBy(() -> Compare.parse(new String[] {"--workloads", "parkd"}))
                .hasMessageContaining("unknown workload parkd");
    }
}
