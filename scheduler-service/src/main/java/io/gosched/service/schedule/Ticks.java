package io.gosched.service.schedule;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import org.springframework.scheduling.support.CronExpression;

/**
 * When a schedule fires: the instants of its ticks, computed from its definition alone so that
 * every node computes the same ones. Ticks are whole milliseconds (a tick's epoch milliseconds
 * name its job).
 *
 * <h2>Cron and daylight saving</h2>
 * A cron expression is matched against the wall clock of the schedule's zone, as Spring's
 * {@link CronExpression} does over a {@link ZonedDateTime}, with one rule of our own for the two
 * days a year the wall clock jumps: a local time that occurs twice (the autumn change: 02:30
 * in Europe/Berlin is first CEST, then CET) fires once, at its first occurrence; a local time that
 * does not occur (the spring change: 02:00 to 03:00 is skipped) fires once, at the instant the
 * gap ends (03:00 the new offset), as Vixie cron runs such jobs right after the change. Only a
 * fixed-time job (its hour field names hours) is moved so; one with a wildcard hour ({@code *},
 * {@code *}/n) runs by elapsed time: the ticks of a skipped hour do not exist, those of a repeated
 * hour run twice. Both come from the zone's rules ({@code java.time}'s
 * tz database), never from the offset of the node.
 *
 * <h2>Every</h2>
 * {@code every} ticks at {@code anchor + k * every}, {@code k >= 1}: the anchor is the instant the
 * schedule was made (or last redefined), stored with it, so every node agrees; the zone plays no
 * part.
 */
public sealed interface Ticks {

    /** The first tick strictly after {@code after}, or null if there is none (a cron expression that never matches again). */
    Instant next(Instant after);

    /** The next {@code n} ticks strictly after {@code after} (fewer if the expression ends). */
    default List<Instant> next(Instant after, int n) {
        List<Instant> out = new ArrayList<>(n);
        Instant t = after;
        while (out.size() < n && (t = next(t)) != null) {
            out.add(t);
        }
        return out;
    }

    /**
     * Ticks of a cron expression on the wall clock of {@code zone}.
     *
     * @param fixedHour  the hour field names hours (not {@code *} or {@code *}/n): such a job runs
     *                   at a wall-clock time, once, also where the zone repeats that time; one with
     *                   a wildcard hour runs by elapsed time through a repeated hour (as Vixie cron
     *                   tells "fixed-time" jobs from "wildcard" ones)
     */
    record Cron(CronExpression expression, ZoneId zone, boolean fixedHour) implements Ticks {

        @Override
        public Instant next(Instant after) {
            ZonedDateTime from = after.atZone(zone);
            ZonedDateTime t = expression.next(from);
            // The autumn change: a wall-clock time in the repeated hour matches twice (once per
            // offset); a fixed-time job ticks at its first occurrence only.
            while (fixedHour && t != null && isSecondOccurrence(t)) {
                t = expression.next(t);
            }
            Instant tick = t == null ? null : t.toInstant();
            if (fixedHour) {
                tick = gapTick(after, tick);
            }
            return tick == null ? null : tick.truncatedTo(ChronoUnit.MILLIS);
        }

        /**
         * The spring change: a wall-clock time in the skipped hour matches no instant, and the
         * expression would skip that day. A fixed-time job ticks instead at the instant the gap
         * ends (as Vixie cron runs such jobs right after the change): the first gap after
         * {@code after}, and before {@code tick}, in which the expression matches a local time.
         */
        private Instant gapTick(Instant after, Instant tick) {
            ZoneOffsetTransition tr = zone.getRules().nextTransition(after);
            for (int seen = 0; tr != null && seen < 8 && (tick == null || tr.getInstant().isBefore(tick)); seen++) {
                if (tr.isGap()) {
                    LocalDateTime match = expression.next(tr.getDateTimeBefore().minusNanos(1));
                    if (match != null && match.isBefore(tr.getDateTimeAfter())) {
                        return tr.getInstant();
                    }
                }
                tr = zone.getRules().nextTransition(tr.getInstant());
            }
            return tick;
        }

        /** True if {@code t}'s local time also existed an offset earlier (the later offset of an overlap). */
        private boolean isSecondOccurrence(ZonedDateTime t) {
            ZonedDateTime earlier = t.withEarlierOffsetAtOverlap();
            return !earlier.toInstant().equals(t.toInstant());
        }
    }

    /** Ticks every {@code period} from {@code anchor}. */
    record Every(Instant anchor, Duration period) implements Ticks {

        @Override
        public Instant next(Instant after) {
            long periodMs = period.toMillis();
            long since = after.toEpochMilli() - anchor.toEpochMilli();
            long k = since < 0 ? 1 : Math.floorDiv(since, periodMs) + 1;
            return anchor.plusMillis(Math.multiplyExact(k, periodMs));
        }
    }

    /**
     * The cron expression in Spring's syntax: six fields (seconds first) or a macro
     * ({@code @hourly}, ...); the classic five fields take seconds 0.
     *
     * @throws IllegalArgumentException naming the field that is wrong, and why
     */
    static Cron cron(String text, ZoneId zone) {
        String trimmed = text.trim();
        String hour = trimmed.startsWith("@") ? (trimmed.equals("@hourly") ? "*" : "0") : hourField(trimmed);
        return new Cron(cron(trimmed), zone, !(hour.equals("*") || hour.startsWith("*/")));
    }

    private static String hourField(String trimmed) {
        String[] f = trimmed.split("\\s+");
        return f.length == 5 ? f[1] : f.length == 6 ? f[2] : "*";
    }

    /** See {@link #cron(String, ZoneId)}. */
    static CronExpression cron(String text) {
        String trimmed = text.trim();
        if (trimmed.startsWith("@")) {
            return parse(trimmed);
        }
        String[] fields = trimmed.split("\\s+");
        if (fields.length == 5) {
            return cron("0 " + trimmed);
        }
        if (fields.length != 6) {
            throw new IllegalArgumentException("must have 6 fields (second minute hour day-of-month month day-of-week), "
                    + "5 (the classic form, seconds 0) or be a macro such as @hourly or @daily; has " + fields.length);
        }
        try {
            return CronExpression.parse(trimmed);
        } catch (IllegalArgumentException e) {
            // Name the field: the first that does not parse with every other field a wildcard.
            for (int i = 0; i < 6; i++) {
                String[] probe = {"*", "*", "*", "*", "*", "*"};
                probe[i] = fields[i];
                try {
                    CronExpression.parse(String.join(" ", probe));
                } catch (IllegalArgumentException bad) {
                    throw new IllegalArgumentException("field " + (i + 1) + " (" + FIELD_NAMES.get(i) + ") '" + fields[i] + "' is wrong: "
                            + reason(bad), bad);
                }
            }
            throw new IllegalArgumentException(reason(e), e);
        }
    }

    private static CronExpression parse(String text) {
        try {
            return CronExpression.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(reason(e), e);
        }
    }

    List<String> FIELD_NAMES = List.of("second", "minute", "hour", "day-of-month", "month", "day-of-week");

    /** Spring's message, without the expression it repeats. */
    private static String reason(IllegalArgumentException e) {
        Throwable root = e;
        while (root.getCause() instanceof IllegalArgumentException || root.getCause() instanceof DateTimeException) {
            root = root.getCause();
        }
        String m = root.getMessage() == null ? "not a valid cron expression" : root.getMessage();
        int in = m.indexOf(" in cron expression");
        return in > 0 ? m.substring(0, in) : m;
    }
}
