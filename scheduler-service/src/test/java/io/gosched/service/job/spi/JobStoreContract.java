package io.gosched.service.job.spi;

import io.gosched.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link JobStore} promises the job engine, wherever the records live: compare-and-set
 * by revision that loses no update among many writers, one winner of an Idempotency-Key race,
 * removal by revision, summaries in the list, watches that replay the current record and then
 * follow its writes in revision order to the latest, progress to its watchers, retention.
 * Implemented by the in-memory store's test here and by the NATS one's in scheduler-cluster.
 *
 * <p>"Nodes" are what {@link #store} returns for different names: views of one store.
 */
public interface JobStoreContract {

    /** The store as node {@code node} sees it; every node of one test shares its records. */
    JobStore store(String node);

    static JobRecord job(String id, Instant submitted) {
        return new JobRecord(id, new JobRecord.Spec(JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}"),
                "n", null, 5, 3, 1000, 1, submitted, null, null, null), JobRecord.Status.queued(submitted));
    }

    static JobRecord job(String id) {
        return job(id, Instant.now());
    }

    @Test
    default void aCreatedRecordReadsBackWholeAndASecondCreateOfItsIdIsRefused() {
        JobStore a = store("a");
        JobRecord r = job("job-1");
        Versioned<JobRecord> created = a.create(r).orElseThrow();
        assertThat(created.value()).isEqualTo(r);
        assertThat(a.create(job("job-1"))).isEmpty();
        Versioned<JobRecord> read = store("b").get("job-1").orElseThrow();
        assertThat(read.value()).as("with its request").isEqualTo(r);
        assertThat(read.revision()).isEqualTo(created.revision());
        assertThat(a.get("job-2")).isEmpty();
    }

    @Test
    default void aCompareAndSetOnAStaleRevisionLosesAndChangesNothing() {
        JobStore a = store("a");
        JobStore b = store("b");
        Versioned<JobRecord> created = a.create(job("job-1")).orElseThrow();
        JobRecord onA = created.value().withStatus(created.value().status().claimed("a", Instant.now()));
        JobRecord onB = created.value().withStatus(created.value().status().claimed("b", Instant.now()));
        Optional<Versioned<JobRecord>> first = a.replace(onA, created.revision());
        Optional<Versioned<JobRecord>> second = b.replace(onB, created.revision());
        assertThat(first).isPresent();
        assertThat(first.get().revision()).as("revisions only grow").isGreaterThan(created.revision());
        assertThat(second).as("the second writer named a revision that is gone").isEmpty();
        assertThat(b.get("job-1").orElseThrow().value().status().node()).isEqualTo("a");
        assertThat(a.replace(job("job-9"), 1)).as("no such job").isEmpty();
    }

    @Test
    default void updatesFromManyThreadsOnSeveralNodesLoseNoWrite() throws Exception {
        store("a").create(job("job-1")).orElseThrow();
        int threads = 6;
        int each = 20;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger applied = new AtomicInteger();
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                JobStore s = store("n" + (t % 3));
                fs.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < each; i++) {
                        JobStore.Update u = s.update("job-1", r -> r.withStatus(new JobRecord.Status(r.status().state(), r.status().ticket(),
                                r.status().attempt(), r.status().attemptBase(), r.status().node(), false, r.status().queuedAt(), null, null,
                                r.status().counters().plus(new JobRecord.Counters(0, 0, 0, 1)), null, null, r.status().attempts())));
                        if (u.applied()) {
                            applied.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(applied.get()).isEqualTo(threads * each);
        assertThat(store("a").get("job-1").orElseThrow().value().status().counters().stepsRun()).as("every increment counted once")
                .isEqualTo(threads * each);
    }

    @Test
    default void anUpdateThatDeclinesWritesNothing() {
        JobStore s = store("a");
        Versioned<JobRecord> created = s.create(job("job-1")).orElseThrow();
        JobStore.Update u = s.update("job-1", r -> null);
        assertThat(u.applied()).isFalse();
        assertThat(u.current().revision()).isEqualTo(created.revision());
        assertThat(s.update("job-none", r -> r).current()).isNull();
    }

    @Test
    default void ofManyThreadsRacingOnOneIdempotencyKeyExactlyOneWinsAndTheRestSeeItsJob() throws Exception {
        int racers = 8;
        int rounds = 40;
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        try {
            for (int round = 0; round < rounds; round++) {
                String key = "key-" + round;
                CountDownLatch ready = new CountDownLatch(racers);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Optional<Versioned<IdempotencyEntry>>>> fs = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    JobStore s = store("n" + (i % 3));
                    IdempotencyEntry mine = new IdempotencyEntry("job-" + round + "-" + i, "hash");
                    fs.add(pool.submit(() -> {
                        ready.countDown();
                        go.await();
                        return s.claimKey(key, mine);
                    }));
                }
                ready.await();
                go.countDown();
                List<String> winners = new ArrayList<>();
                List<String> seen = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    Optional<Versioned<IdempotencyEntry>> r = fs.get(i).get();
                    if (r.isEmpty()) {
                        winners.add("job-" + round + "-" + i);
                    } else {
                        seen.add(r.get().value().jobId());
                    }
                }
                assertThat(winners).as("round %d: exactly one claim created the key", round).hasSize(1);
                assertThat(seen).as("round %d: every other racer got the winner's entry", round).hasSize(racers - 1)
                        .containsOnly(winners.getFirst());
                assertThat(store("a").key(key).orElseThrow().value().jobId()).as("round %d: the key still names the winner", round)
                        .isEqualTo(winners.getFirst());
            }
            Versioned<IdempotencyEntry> k = store("a").key("key-0").orElseThrow();
            assertThat(store("b").releaseKey("key-0", k.revision() + 1000)).as("a stale revision frees nothing").isFalse();
            assertThat(store("b").releaseKey("key-0", k.revision())).isTrue();
            assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> store("a").key("key-0").isEmpty())).isTrue();
            assertThat(store("a").claimKey("key-0", new IdempotencyEntry("job-new", "h2"))).as("free again").isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    default void aRemovalNamesTheRevisionItRemoves() {
        JobStore s = store("a");
        Versioned<JobRecord> v = s.create(job("job-1")).orElseThrow();
        Versioned<JobRecord> moved = s.replace(v.value().withStatus(v.value().status().claimed("a", Instant.now())), v.revision())
                .orElseThrow();
        assertThat(s.remove("job-1", v.revision())).as("the record moved on since").isFalse();
        assertThat(s.get("job-1")).isPresent();
        assertThat(s.remove("job-1", moved.revision())).isTrue();
        assertThat(s.get("job-1")).isEmpty();
        assertThat(s.remove("job-1", moved.revision())).isFalse();
    }

    @Test
    default void theListHoldsEveryJobAsASummary() {
        JobStore s = store("a");
        for (int i = 0; i < 5; i++) {
            s.create(job("job-" + i)).orElseThrow();
        }
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> store("b").list().size() == 5)).isTrue();
        List<Versioned<JobRecord>> all = store("b").list();
        assertThat(all).extracting(v -> v.value().id()).containsExactlyInAnyOrder("job-0", "job-1", "job-2", "job-3", "job-4");
        assertThat(all).allSatisfy(v -> assertThat(v.value().spec().request()).as("no request bodies in the list").isNull());
    }

    /** The states of job-1's life as {@link #watchJobOnesLife} writes it, each with its attempt. */
    private static List<String> life() {
        return List.of("queued/0", "running/1", "queued/1", "running/2", "succeeded/2", "removed");
    }

    private static String stateOf(JobRecord r) {
        return r == null ? "removed" : r.status().state().json() + "/" + r.status().attempt();
    }

    /**
     * Creates job-1 on node a, watches it from node b, then writes its life on node a (two
     * attempts, the success, the removal), calling {@code afterWrite} after each write with what
     * the watch saw so far and how many states have been written by then (the first included);
     * returns what the watch saw, the removal included.
     */
    private List<String> watchJobOnesLife(BiConsumer<List<String>, Integer> afterWrite) throws Exception {
        JobStore a = store("a");
        Versioned<JobRecord> v = a.create(job("job-1")).orElseThrow();
        List<String> seen = new CopyOnWriteArrayList<>();
        try (AutoCloseable w = store("b").watch("job-1", r -> seen.add(stateOf(r)))) {
            assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> seen.size() == 1)).as("the current record").isTrue();
            Instant now = Instant.now();
            JobRecord running = v.value().withStatus(v.value().status().claimed("a", now));
            Versioned<JobRecord> v2 = a.replace(running, v.revision()).orElseThrow();
            afterWrite.accept(seen, 2);
            JobRecord requeued = running.withStatus(running.status().requeued(now, null, null, null, false));
            Versioned<JobRecord> v3 = a.replace(requeued, v2.revision()).orElseThrow();
            afterWrite.accept(seen, 3);
            JobRecord again = requeued.withStatus(requeued.status().claimed("a", now));
            Versioned<JobRecord> v4 = a.replace(again, v3.revision()).orElseThrow();
            afterWrite.accept(seen, 4);
            JobRecord done = again.withStatus(again.status().finished(JobState.SUCCEEDED, now, JobRecord.Counters.ZERO, null, null));
            Versioned<JobRecord> v5 = a.replace(done, v4.revision()).orElseThrow();
            afterWrite.accept(seen, 5);
            assertThat(a.remove("job-1", v5.revision())).isTrue();
            afterWrite.accept(seen, 6);
            assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> seen.contains("removed"))).as("seen: %s", seen).isTrue();
            Thread.sleep(100); // nothing may follow the removal
        }
        return List.copyOf(seen);
    }

    @Test
    default void aWatchThatKeepsUpGetsTheCurrentRecordThenEveryWriteThenTheRemoval() throws Exception {
        List<String> seen = watchJobOnesLife((s, written) -> assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.size() >= written))
                .as("state %d reached the watcher; seen: %s", written, s).isTrue());
        assertThat(seen).containsExactlyElementsOf(life());
    }

    @Test
    default void aWatchThatFallsBehindMayMissSupersededWritesButNeverGoesBackAndEndsAtTheLatest() throws Exception {
        // back to back: the watcher may get some writes only as the next one
        List<String> seen = watchJobOnesLife((s, written) -> {});
        assertThat(seen).as("the current record first, the removal last").startsWith("queued/0").endsWith("removed");
        assertThat(life()).as("in revision order, each once").containsSubsequence(seen);
        assertThat(seen).doesNotHaveDuplicates();
    }

    @Test
    default void aWatchOfEveryJobSeesWritesOfAllOfThemWithTheirIds() throws Exception {
        JobStore a = store("a");
        List<String> seen = new CopyOnWriteArrayList<>();
        try (AutoCloseable w = store("b").watchAll((id, r) -> seen.add(id + ":" + (r == null ? "removed" : r.status().state().json())))) {
            Thread.sleep(200); // a watch starts with what comes next, not with what exists
            Versioned<JobRecord> one = a.create(job("job-1")).orElseThrow();
            a.create(job("job-2")).orElseThrow();
            // the removal waits for the creates to arrive: a watch may pass over a superseded write
            assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> seen.size() == 2)).as("seen: %s", seen).isTrue();
            a.remove("job-1", one.revision());
            assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> seen.size() == 3)).as("seen: %s", seen).isTrue();
        }
        assertThat(seen).containsExactlyInAnyOrder("job-1:queued", "job-2:queued", "job-1:removed");
        assertThat(seen.indexOf("job-1:queued")).isLessThan(seen.indexOf("job-1:removed"));
    }

    @Test
    default void progressReachesTheWatchersOfItsJobAndOfAllJobs() throws Exception {
        JobStore runner = store("a");
        JobStore reader = store("b");
        List<JobStore.Progress> one = new CopyOnWriteArrayList<>();
        List<JobStore.Progress> all = new CopyOnWriteArrayList<>();
        try (AutoCloseable w1 = reader.watchProgress("job-1", one::add); AutoCloseable w2 = reader.watchAllProgress(all::add)) {
            JobStore.Progress p1 = new JobStore.Progress("job-1", 1, new JobRecord.Counters(3, 2, 1, 9), 4);
            JobStore.Progress p2 = new JobStore.Progress("job-2", 2, new JobRecord.Counters(1, 0, 0, 1), 1);
            // best effort by promise: a watch that is still being set up may miss the first ones, so send until seen
            assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> {
                runner.publishProgress(p1);
                runner.publishProgress(p2);
                return one.contains(p1) && all.contains(p1) && all.contains(p2);
            })).isTrue();
        }
        assertThat(one).as("only its own job's").allSatisfy(p -> assertThat(p.jobId()).isEqualTo("job-1"));
    }

    @Test
    default void retentionRemovesTheOldestFinishedJobsBeyondTheBoundsWithTheirKeys() {
        JobStore s = store("a");
        Instant t0 = Instant.now().minusSeconds(100);
        for (int i = 0; i < 6; i++) {
            String id = "job-" + i;
            Versioned<JobRecord> v = s.create(new JobRecord(id, new JobRecord.Spec(null, null, null, 5, 1, 1000, 1, t0, null, "key-" + i, "h"),
                    JobRecord.Status.queued(t0))).orElseThrow();
            s.claimKey("key-" + i, new IdempotencyEntry(id, "h"));
            JobRecord r = v.value();
            Instant finished = t0.plusSeconds(i * 10L);
            JobRecord done = r.withStatus(r.status().claimed("a", t0).finished(JobState.SUCCEEDED, finished, JobRecord.Counters.ZERO, null,
                    null));
            s.replace(done, v.revision()).orElseThrow();
        }
        s.create(job("job-queued")).orElseThrow();
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.list().size() == 7
                && s.list().stream().filter(v -> v.value().status().state().isFinal()).count() == 6)).isTrue();
        // keep at most 4 finished, and none finished before t0 + 15 s: jobs 0 and 1 go either way
        int removed = s.evict(4, t0.plusSeconds(15));
        assertThat(removed).isEqualTo(2);
        assertThat(s.get("job-0")).isEmpty();
        assertThat(s.get("job-1")).isEmpty();
        assertThat(s.get("job-2")).isPresent();
        assertThat(s.get("job-queued")).as("only finished jobs are retained by count").isPresent();
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.key("key-0").isEmpty() && s.key("key-1").isEmpty())).as("keys went with their jobs")
                .isTrue();
        assertThat(s.key("key-2")).isPresent();
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.list().size() == 5)).isTrue();
        assertThat(s.evict(2, t0)).as("then two more by count, oldest first").isEqualTo(2);
        assertThat(s.get("job-2")).isEmpty();
        assertThat(s.get("job-3")).isEmpty();
        assertThat(s.get("job-5")).isPresent();
    }
}
