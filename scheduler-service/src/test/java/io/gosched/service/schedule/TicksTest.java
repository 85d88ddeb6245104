package io.gosched.service.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

/** The ticks of cron expressions and periods: syntax, next fire, and the zone's daylight-saving days. */
class TicksTest {

    static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    static final ZoneId UTC = ZoneId.of("UTC");

    @Test
    void sixFieldsAreSecondsFirstAndFiveFieldsTakeSecondZero() {
        Instant from = Instant.parse("2026-06-01T10:00:00Z");
        assertThat(Ticks.cron("15 0 3 * * *", UTC).next(from)).isEqualTo(Instant.parse("2026-06-02T03:00:15Z"));
        assertThat(Ticks.cron("*/5 * * * *", UTC).next(from, 2))
                .containsExactly(Instant.parse("2026-06-01T10:05:00Z"), Instant.parse("2026-06-01T10:10:00Z"));
        assertThat(Ticks.cron("@hourly", UTC).next(from)).isEqualTo(Instant.parse("2026-06-01T11:00:00Z"));
        assertThat(Ticks.cron("@daily", UTC).next(from)).isEqualTo(Instant.parse("2026-06-02T00:00:00Z"));
    }

    @Test
    void aCronTickIsOnTheZonesWallClock() {
        // 03:00 in Berlin in June is 01:00 UTC (CEST, +02:00)
        assertThat(Ticks.cron("0 0 3 * * *", BERLIN).next(Instant.parse("2026-06-01T10:00:00Z")))
                .isEqualTo(Instant.parse("2026-06-02T01:00:00Z"));
    }

    @Test
    void aBadExpressionNamesItsFieldAndWhy() {
        assertThatThrownBy(() -> Ticks.cron("0 61 * * * *", UTC)).hasMessageContaining("field 2 (minute) '61'")
                .hasMessageContaining("59");
        assertThatThrownBy(() -> Ticks.cron("0 0 25 * * *", UTC)).hasMessageContaining("field 3 (hour) '25'");
        assertThatThrownBy(() -> Ticks.cron("0 0 1 * * FOO", UTC)).hasMessageContaining("field 6 (day-of-week)");
        assertThatThrownBy(() -> Ticks.cron("* * *", UTC)).hasMessageContaining("must have 6 fields").hasMessageContaining("has 3");
        assertThatThrownBy(() -> Ticks.cron("@fortnightly", UTC)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyCountsFromItsAnchor() {
        Instant anchor = Instant.parse("2026-01-01T00:00:00.250Z");
        Ticks t = new Ticks.Every(anchor, Duration.ofSeconds(30));
        assertThat(t.next(anchor)).isEqualTo(anchor.plusSeconds(30));
        assertThat(t.next(anchor.plusSeconds(30))).isEqualTo(anchor.plusSeconds(60));
        assertThat(t.next(anchor.plusSeconds(31))).isEqualTo(anchor.plusSeconds(60));
        assertThat(t.next(anchor.minusSeconds(100))).isEqualTo(anchor.plusSeconds(30));
    }

    /** Ticks per local date of {@code zone} between two instants. */
    private static Map<LocalDate, List<Instant>> perLocalDay(Ticks t, Instant from, Instant to, ZoneId zone) {
        Map<LocalDate, List<Instant>> out = new TreeMap<>();
        for (Instant i = t.next(from); i != null && i.isBefore(to); i = t.next(i)) {
            out.computeIfAbsent(i.atZone(zone).toLocalDate(), d -> new java.util.ArrayList<>()).add(i);
        }
        return out;
    }

    @Test
    void aDaily0230InBerlinTicksOnceOnTheSpringChangeDay() {
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST, 02:30 does not exist that day
        Map<LocalDate, List<Instant>> days = perLocalDay(Ticks.cron("0 30 2 * * *", BERLIN), Instant.parse("2026-03-27T00:00:00Z"),
                Instant.parse("2026-03-31T00:00:00Z"), BERLIN);
        assertThat(days).hasSize(4).allSatisfy((d, ticks) -> assertThat(ticks).as(d.toString()).hasSize(1));
        assertThat(days.get(LocalDate.parse("2026-03-28"))).containsExactly(Instant.parse("2026-03-28T01:30:00Z")); // CET
        assertThat(days.get(LocalDate.parse("2026-03-30"))).containsExactly(Instant.parse("2026-03-30T00:30:00Z")); // CEST
        // on the day itself: once, as the gap ends (03:00 CEST)
        assertThat(days.get(LocalDate.parse("2026-03-29"))).containsExactly(Instant.parse("2026-03-29T01:00:00Z"));
    }

    @Test
    void aDaily0230InBerlinTicksOnceOnTheAutumnChangeDay() {
        // 2026-10-25: 03:00 CEST goes back to 02:00 CET, 02:30 occurs twice
        Map<LocalDate, List<Instant>> days = perLocalDay(Ticks.cron("0 30 2 * * *", BERLIN), Instant.parse("2026-10-23T00:00:00Z"),
                Instant.parse("2026-10-27T00:00:00Z"), BERLIN);
        assertThat(days).hasSize(4).allSatisfy((d, ticks) -> assertThat(ticks).as(d.toString()).hasSize(1));
        // the first 02:30, still CEST (+02:00)
        assertThat(days.get(LocalDate.parse("2026-10-25"))).containsExactly(Instant.parse("2026-10-25T00:30:00Z"));
        assertThat(days.get(LocalDate.parse("2026-10-26"))).containsExactly(Instant.parse("2026-10-26T01:30:00Z")); // CET
    }

    @Test
    void aWildcardHourRunsByElapsedTimeThroughTheRepeatedHour() {
        // every 30 minutes: the 25-hour autumn day has 50 ticks, the 23-hour spring day 46
        Ticks t = Ticks.cron("0 */30 * * * *", BERLIN);
        assertThat(perLocalDay(t, Instant.parse("2026-10-24T00:00:00Z"), Instant.parse("2026-10-27T00:00:00Z"), BERLIN)
                .get(LocalDate.parse("2026-10-25"))).hasSize(50);
        assertThat(perLocalDay(t, Instant.parse("2026-03-28T00:00:00Z"), Instant.parse("2026-03-31T00:00:00Z"), BERLIN)
                .get(LocalDate.parse("2026-03-29"))).hasSize(46);
    }
}
