package io.gosched.service.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.regex.Pattern;

import io.gosched.service.error.InvalidRequestException;
import io.gosched.service.error.Violation;
import io.gosched.service.job.JobService;
import io.gosched.service.schedule.spi.ScheduleRecord;
import io.gosched.service.workload.JsonInput;
import tools.jackson.databind.JsonNode;

/**
 * Reads the body of POST /api/v1/schedules and PUT /api/v1/schedules/{name}:
 * <pre>
 * { "name": NAME, "cron": "0 0 3 * * *" | "every": "PT30S", "timeZone": IANA id?,
 *   "job": {a job body as POST /api/v1/jobs takes it}, "overlap": "skip"|"allow"|"cancel-previous"?,
 *   "misfire": "skip"|"run-once"? }
 * </pre>
 * The job is checked by the job service's own parser, its violations pointed under {@code /job}.
 * Every violation is collected with its JSON pointer. Thread-safe.
 */
final class ScheduleParser {

    /** A schedule's name: it names its jobs, a URL path segment, a KV key and a meter tag. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,63}");
    /** The shortest period: ticks are decided against the store, and a job per tick must stay affordable. */
    static final Duration MIN_EVERY = Duration.ofSeconds(1);
    static final Duration MAX_EVERY = Duration.ofDays(366);
    private static final Set<String> FIELDS = Set.of("name", "cron", "every", "timeZone", "job", "overlap", "misfire");

    private final JobService jobs;

    ScheduleParser(JobService jobs) {
        this.jobs = jobs;
    }

    /**
     * A new schedule's record from {@code body}, its ticks counted from {@code now}.
     *
     * @param pathName  the name in the URL (PUT), which the body's name must match if it has one; null for POST
     * @throws InvalidRequestException listing every violation
     */
    ScheduleRecord parse(JsonNode body, String pathName, Instant now) {
        JsonInput in = new JsonInput();
        if (!in.object(body, "")) {
            in.throwIfInvalid();
        }
        in.onlyFields(body, "", FIELDS);
        String name = in.string(body, "", "name", pathName == null);
        if (name != null && !NAME.matcher(name).matches()) {
            in.violation("/name", "must be 1 to 64 letters, digits, '_' or '-', starting with a letter or digit (" + NAME.pattern() + ")");
        } else if (name != null && pathName != null && !name.equals(pathName)) {
            in.violation("/name", "must be the name in the URL ('" + pathName + "') or absent; a schedule is not renamed");
        }
        if (name == null) {
            name = pathName;
        }
        ZoneId zone = ZoneId.of("UTC");
        String tz = in.string(body, "", "timeZone", false);
        if (tz != null) {
            try {
                zone = ZoneId.of(tz);
            } catch (java.time.DateTimeException e) {
                in.violation("/timeZone", "unknown time zone '" + tz + "': an IANA id such as Europe/Berlin, or UTC");
                zone = null;
            }
        }
        boolean hasCron = body.has("cron") && !body.get("cron").isNull();
        boolean hasEvery = body.has("every") && !body.get("every").isNull();
        String cron = null;
        Duration every = null;
        if (hasCron == hasEvery) {
            in.violation("", "needs exactly one of 'cron' (e.g. \"0 0 3 * * *\", \"*/5 * * * *\", \"@daily\") or 'every' "
                    + "(an ISO-8601 duration such as \"PT30S\")");
        } else if (hasCron) {
            cron = in.string(body, "", "cron", true);
            if (cron != null) {
                try {
                    Ticks t = Ticks.cron(cron, zone == null ? ZoneId.of("UTC") : zone);
                    if (t.next(now) == null) {
                        in.violation("/cron", "never fires (no date matches it)");
                    }
                } catch (IllegalArgumentException e) {
                    in.violation("/cron", e.getMessage());
                }
            }
        } else {
            String s = in.string(body, "", "every", true);
            if (s != null) {
                try {
                    every = Duration.parse(s);
                    if (every.compareTo(MIN_EVERY) < 0) {
                        in.violation("/every", "must be at least " + MIN_EVERY + ", was " + s);
                    } else if (every.compareTo(MAX_EVERY) > 0) {
                        in.violation("/every", "must be at most " + MAX_EVERY + " (366 days), was " + s);
                    } else if (every.toNanos() % 1_000_000 != 0) {
                        in.violation("/every", "must be whole milliseconds, was " + s);
                    }
                } catch (DateTimeParseException | ArithmeticException e) {
                    in.violation("/every", "must be an ISO-8601 duration such as PT30S, PT5M or P1D, was '" + s + "'");
                }
            }
        }
        Overlap overlap = Overlap.SKIP;
        String o = in.string(body, "", "overlap", false);
        if (o != null && (overlap = Overlap.of(o)) == null) {
            in.violation("/overlap", "must be one of skip, allow, cancel-previous, was '" + o + "'");
        }
        Misfire misfire = Misfire.SKIP;
        String m = in.string(body, "", "misfire", false);
        if (m != null && (misfire = Misfire.of(m)) == null) {
            in.violation("/misfire", "must be one of skip, run-once, was '" + m + "'");
        }
        JsonNode job = body.get("job");
        if (job == null || job.isNull()) {
            in.violation("/job", "is required: a job body as POST /api/v1/jobs takes it");
        } else if (in.object(job, "/job")) {
            if (job.has("notBefore")) {
                in.violation("/job/notBefore", "has no place in a schedule's job: its ticks say when it runs");
            }
            try {
                jobs.validate(job, now);
            } catch (InvalidRequestException e) {
                for (Violation v : e.violations()) {
                    in.violation("/job" + v.pointer(), v.detail());
                }
            }
        }
        in.throwIfInvalid();
        Instant at = now.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        return new ScheduleRecord(name, cron == null ? null : cron.trim(), every, zone.getId(), job, overlap.json(), misfire.json(),
                at, at, false, at, null, null, true, null);
    }

    /** The ticks of a stored schedule. */
    static Ticks ticks(ScheduleRecord r) {
        return r.cron() != null ? Ticks.cron(r.cron(), ZoneId.of(r.timeZone())) : new Ticks.Every(r.anchor(), r.every());
    }
}
