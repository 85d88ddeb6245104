package io.gosched.service.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.gosched.service.job.JobView;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import org.junit.jupiter.api.Test;

/** Firing ticks on a fixed clock moved by the test: one job per tick, overlap and misfire policies, DST, repairs. */
class ScheduleFiringTest {

    static final String QUICK_JOB = "{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}";
    /** A job that runs until cancelled (or its 60 s deadline). */
    static final String LONG_JOB = "{\"workload\":{\"steps\":[{\"op\":\"sleep\",\"ms\":50000}]},\"timeoutMs\":60000}";

    static String every(String name, String period, String job, String extra) {
        return "{\"name\":\"" + name + "\",\"every\":\"" + period + "\",\"job\":" + job + extra + "}";
    }

    @Test
    void eachTickMakesOneJobNamedByScheduleAndTick() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("tick", "PT1S", QUICK_JOB, ",\"overlap\":\"allow\"")));
            ScheduleFiring f = b.firing();
            assertThat(f.fireDue()).isEqualTo(ScheduleTestbed.T0.plusSeconds(1));
            assertThat(b.jobsOf("tick")).isEmpty(); // nothing is due at creation
            for (int i = 1; i <= 5; i++) {
                b.clock.advance(Duration.ofSeconds(1));
                f.fireDue();
                f.fireDue(); // a second round at the same instant finds the tick decided
            }
            List<JobView> made = b.jobsOf("tick");
            assertThat(made).extracting(JobView::scheduledFor).containsExactly(ScheduleTestbed.T0.plusSeconds(1),
                    ScheduleTestbed.T0.plusSeconds(2), ScheduleTestbed.T0.plusSeconds(3), ScheduleTestbed.T0.plusSeconds(4),
                    ScheduleTestbed.T0.plusSeconds(5));
            assertThat(made).allSatisfy(j -> {
                assertThat(j.schedule()).isEqualTo("tick");
                assertThat(j.id()).isEqualTo(ScheduleService.jobId("tick", j.scheduledFor()));
            });
            assertThat(b.count("gosched.schedule.fires", "tick")).isEqualTo(5);
            assertThat(b.meters.get("gosched.schedule.next.fire").tag("schedule", "tick").gauge().value())
                    .isEqualTo(ScheduleTestbed.T0.plusSeconds(6).getEpochSecond());
            assertThat(b.meters.get("gosched.schedule.last.fire").tag("schedule", "tick").gauge().value())
                    .isEqualTo(ScheduleTestbed.T0.plusSeconds(5).getEpochSecond());
            ScheduleView v = b.schedules.get("tick", 3);
            assertThat(v.lastFireAt()).isEqualTo(ScheduleTestbed.T0.plusSeconds(5));
            assertThat(v.lastJobId()).isEqualTo(made.getLast().id());
            assertThat(v.nextFireAt()).isEqualTo(ScheduleTestbed.T0.plusSeconds(6));
            assertThat(v.nextFireTimes()).containsExactly(ScheduleTestbed.T0.plusSeconds(6), ScheduleTestbed.T0.plusSeconds(7),
                    ScheduleTestbed.T0.plusSeconds(8));
        }
    }

    /**
     * Many firings ("nodes") over one store, racing on every tick from several threads each, in
     * random order: every tick makes exactly one job.
     */
    @Test
    void firingsRacingOnEveryTickMakeOneJobPerTick() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("race", "PT1S", QUICK_JOB, ",\"overlap\":\"allow\"")));
            int nodes = 4;
            List<ScheduleFiring> firings = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                firings.add(b.firing());
            }
            int ticks = 60;
            for (int t = 1; t <= ticks; t++) {
                // the clock jumps one or two ticks at a time, so some rounds find two due
                b.clock.advance(Duration.ofSeconds(t % 7 == 0 ? 2 : 1));
                CyclicBarrier start = new CyclicBarrier(nodes * 2);
                CountDownLatch done = new CountDownLatch(nodes * 2);
                List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int n = 0; n < nodes * 2; n++) {
                    ScheduleFiring f = firings.get(n % nodes);
                    Thread.ofPlatform().start(() -> {
                        try {
                            start.await();
                            if (ThreadLocalRandom.current().nextBoolean()) {
                                Thread.yield();
                            }
                            f.fire(b.store.get("race").orElseThrow());
                        } catch (Throwable e) {
                            errors.add(e);
                        } finally {
                            done.countDown();
                        }
                    });
                }
                assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
                assertThat(errors).isEmpty();
            }
            Instant end = b.clock.instant();
            List<JobView> made = b.jobsOf("race");
            Map<Instant, Integer> perTick = new HashMap<>();
            made.forEach(j -> perTick.merge(j.scheduledFor(), 1, Integer::sum));
            assertThat(perTick.values()).as("jobs per tick").allMatch(n -> n == 1);
            long expected = Duration.between(ScheduleTestbed.T0, end).toSeconds();
            assertThat(perTick).hasSize((int) expected);
            assertThat(b.count("gosched.schedule.fires", "race")).isEqualTo(expected);
        }
    }

    @Test
    void overlapSkipMakesNoJobWhileTheLastRuns() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("slow", "PT10S", LONG_JOB, "")));
            ScheduleFiring f = b.firing();
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            String first = b.jobsOf("slow").getFirst().id();
            awaitState(b, first, JobState.RUNNING);
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            assertThat(b.jobsOf("slow")).extracting(JobView::id).containsExactly(first);
            assertThat(b.count("gosched.schedule.skips", "slow")).isEqualTo(2);
            b.jobs.cancel(first);
            awaitState(b, first, JobState.CANCELLED);
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            assertThat(b.jobsOf("slow")).hasSize(2);
            assertThat(b.jobsOf("slow").getLast().scheduledFor()).isEqualTo(ScheduleTestbed.T0.plusSeconds(40));
        }
    }

    @Test
    void overlapAllowRunsAlongside() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("wide", "PT10S", LONG_JOB, ",\"overlap\":\"allow\"")));
            ScheduleFiring f = b.firing();
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            awaitState(b, b.jobsOf("wide").getFirst().id(), JobState.RUNNING);
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            assertThat(b.jobsOf("wide")).hasSize(2).allSatisfy(j -> assertThat(j.state().isFinal()).isFalse());
        }
    }

    @Test
    void overlapCancelPreviousCancelsTheLastThenSubmits() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("fresh", "PT10S", LONG_JOB, ",\"overlap\":\"cancel-previous\"")));
            ScheduleFiring f = b.firing();
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            String first = b.jobsOf("fresh").getFirst().id();
            awaitState(b, first, JobState.RUNNING);
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            awaitState(b, first, JobState.CANCELLED);
            assertThat(b.jobsOf("fresh")).hasSize(2);
            assertThat(b.jobsOf("fresh").getLast().state().isFinal()).isFalse();
        }
    }

    @Test
    void misfireSkipCountsTheMissedTicksAndMakesNoJobForThem() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("down", "PT10S", QUICK_JOB, ",\"overlap\":\"allow\"")));
            // no node ran for 10 minutes: 60 ticks, of which those older than the grace were missed
            b.clock.advance(Duration.ofMinutes(10));
            b.firing().fireDue();
            // ticks within the grace (15 s: the ticks of 590 s and 600 s) still fire, late; the 58 before were missed
            int late = 2;
            assertThat(b.count("gosched.schedule.misfires", "down")).isEqualTo(60 - late);
            assertThat(b.jobsOf("down")).hasSize((int) late)
                    .allSatisfy(j -> assertThat(j.scheduledFor()).isAfter(b.clock.instant().minus(ScheduleFiring.MISFIRE_GRACE)));
        }
    }

    @Test
    void misfireRunOnceMakesOneJobForAllTheMissedTicks() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json("{\"name\":\"catchup\",\"cron\":\"0 * * * *\",\"misfire\":\"run-once\",\"job\":"
                    + QUICK_JOB + "}"));
            b.clock.advance(Duration.ofHours(5).plusMinutes(30)); // five hourly ticks missed
            ScheduleFiring f = b.firing();
            f.fireDue();
            f.fireDue();
            assertThat(b.count("gosched.schedule.misfires", "catchup")).isEqualTo(5);
            assertThat(b.jobsOf("catchup")).extracting(JobView::scheduledFor).containsExactly(ScheduleTestbed.T0.plus(Duration.ofHours(5)));
            awaitState(b, b.jobsOf("catchup").getFirst().id(), JobState.SUCCEEDED); // else the next tick is an overlap, skipped
            b.clock.advance(Duration.ofMinutes(30));
            f.fireDue();
            assertThat(b.jobsOf("catchup")).hasSize(2); // and on time again afterwards
        }
    }

    /** Three days down for a one-second schedule: more missed ticks than one decision counts, still one job for them all. */
    @Test
    void aLongOutageIsDecidedInChunksAndRunOnceStillMakesOneJob() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("long", "PT1S", QUICK_JOB, ",\"overlap\":\"allow\",\"misfire\":\"run-once\"")));
            Instant now = b.clock.advance(Duration.ofDays(3));
            b.firing().fireDue();
            long missed = Duration.ofDays(3).minus(ScheduleFiring.MISFIRE_GRACE).toSeconds();
            assertThat(missed).isGreaterThan(ScheduleFiring.MAX_COUNTED_MISSES);
            assertThat(b.count("gosched.schedule.misfires", "long")).isEqualTo(missed);
            Instant lastMissed = ScheduleTestbed.T0.plusSeconds(missed);
            assertThat(b.jobsOf("long")).extracting(JobView::scheduledFor).filteredOn(t -> !t.isAfter(lastMissed))
                    .containsExactly(lastMissed);
            assertThat(b.jobsOf("long")).hasSize(1 + (int) ScheduleFiring.MISFIRE_GRACE.toSeconds());
            assertThat(b.schedules.get("long", 0).lastFireAt()).isEqualTo(now);
        }
    }

    @Test
    void pausedSchedulesDoNotFireAndResumingPassesOverThePause() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("nap", "PT10S", QUICK_JOB, ",\"misfire\":\"run-once\"")));
            ScheduleFiring f = b.firing();
            b.schedules.pause("nap");
            assertThat(b.schedules.get("nap", 3).nextFireAt()).isNull();
            b.clock.advance(Duration.ofMinutes(5));
            f.fireDue();
            assertThat(b.jobsOf("nap")).isEmpty();
            b.schedules.resume("nap");
            f.fireDue();
            assertThat(b.jobsOf("nap")).isEmpty();
            assertThat(b.count("gosched.schedule.misfires", "nap")).isZero();
            b.clock.advance(Duration.ofSeconds(10));
            f.fireDue();
            assertThat(b.jobsOf("nap")).hasSize(1);
        }
    }

    @Test
    void triggerRunsOneJobNowWithoutTouchingTheTicks() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("now", "PT1H", QUICK_JOB, "")));
            b.clock.advance(Duration.ofSeconds(7));
            JobView j = b.schedules.trigger("now");
            assertThat(j.schedule()).isEqualTo("now");
            assertThat(j.scheduledFor()).isEqualTo(ScheduleTestbed.T0.plusSeconds(7));
            ScheduleView v = b.schedules.get("now", 0);
            assertThat(v.lastJobId()).isEqualTo(j.id());
            assertThat(v.nextFireAt()).isEqualTo(ScheduleTestbed.T0.plus(Duration.ofHours(1)));
        }
    }

    /**
     * A node that died after deciding a tick and storing its job, before queueing the job's
     * ticket, left a queued record with no ticket and the fire not marked admitted: the next
     * round (any node) queues it, and the job runs.
     */
    @Test
    void aJobStoredButNeverQueuedIsQueuedByTheNextRound() throws Exception {
        try (ScheduleTestbed b = new ScheduleTestbed(ScheduleTestbed.T0)) {
            b.schedules.create(ScheduleTestbed.json(every("orphan", "PT1S", QUICK_JOB, "")));
            Instant tick = ScheduleTestbed.T0.plusSeconds(1);
            String id = ScheduleService.jobId("orphan", tick);
            // what the dead node left: the decision, and the job's record without its ticket
            Versioned<ScheduleRecord> s = b.store.get("orphan").orElseThrow();
            assertThat(b.store.replace(s.value().firing(tick, id), s.revision())).isPresent();
            Instant now = Instant.now();
            assertThat(b.jobStore.create(new JobRecord(id, new JobRecord.Spec(ScheduleTestbed.json(QUICK_JOB), null, null, 5, 1, 60_000, 1,
                    now, null, null, null, null, "orphan", tick), JobRecord.Status.queued(now)))).isPresent();
            assertThat(b.queue.holdsTicketOf(id)).isFalse();
            b.clock.advance(Duration.ofSeconds(1));
            ScheduleFiring another = b.firing();
            another.fireDue();
            assertThat(b.queue.holdsTicketOf(id) || b.jobs.get(id).state() != JobState.QUEUED)
                    .as("left to the node that decided it, within " + ScheduleFiring.HELP_AFTER).isFalse();
            b.clock.advance(ScheduleFiring.HELP_AFTER);
            another.fireDue();
            awaitState(b, id, JobState.SUCCEEDED);
            assertThat(b.jobsOf("orphan")).extracting(JobView::id).contains(id);
            assertThat(b.jobs.get(id).scheduledFor()).isEqualTo(tick);
            assertThat(b.store.get("orphan").orElseThrow().value().submitted()).isTrue();
        }
    }

    /** A daily 02:30 Europe/Berlin schedule, the clock moved minute by minute across both change days of 2026. */
    @Test
    void aDaily0230BerlinScheduleFiresOnceOnBothChangeDays() throws Exception {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        for (String day : List.of("2026-03-28T12:00:00Z", "2026-10-24T12:00:00Z")) {
            try (ScheduleTestbed b = new ScheduleTestbed(Instant.parse(day))) {
                b.schedules.create(ScheduleTestbed.json("{\"name\":\"night\",\"cron\":\"0 30 2 * * *\",\"timeZone\":\"Europe/Berlin\","
                        + "\"overlap\":\"allow\",\"job\":" + QUICK_JOB + "}"));
                ScheduleFiring f = b.firing();
                for (int m = 0; m < 3 * 24 * 60; m++) {
                    b.clock.advance(Duration.ofMinutes(1));
                    f.fireDue();
                }
                Map<LocalDate, Integer> perDay = new java.util.TreeMap<>();
                b.jobsOf("night").forEach(j -> perDay.merge(j.scheduledFor().atZone(berlin).toLocalDate(), 1, Integer::sum));
                LocalDate first = Instant.parse(day).atZone(berlin).toLocalDate().plusDays(1);
                assertThat(perDay).as(day).containsExactly(Map.entry(first, 1), Map.entry(first.plusDays(1), 1),
                        Map.entry(first.plusDays(2), 1));
                assertThat(b.count("gosched.schedule.misfires", "night")).isZero();
            }
        }
    }

    static void awaitState(ScheduleTestbed b, String id, JobState state) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (b.jobs.get(id).state() != state) {
            assertThat(System.nanoTime() - end).as("job " + id + " reaching " + state + ", is " + b.jobs.get(id).state()).isNegative();
            Thread.sleep(10);
        }
    }
}
