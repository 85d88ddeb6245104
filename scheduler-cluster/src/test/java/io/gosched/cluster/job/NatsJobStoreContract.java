package io.gosched.cluster.job;

import io.gosched.testing.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.gosched.service.error.BackendFullException;
import io.gosched.service.error.BackendUnavailableException;
import io.gosched.service.job.spi.JobState;
import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.Versioned;
import io.gosched.cluster.ClusterProperties;
import io.gosched.cluster.NatsTestBase;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The job store's promises against a real NATS server, those of every store
 * ({@link io.gosched.service.job.spi.JobStoreContract}, which the in-memory store passes too) and more: compare-and-set that loses no update
 * across nodes, one winner of an Idempotency-Key race, watches in revision order, retention,
 * limits, durability through a SIGKILL.
 */
abstract class NatsJobStoreContract extends NatsTestBase implements io.gosched.service.job.spi.JobStoreContract {

    @Override
    public NatsJobStore store(String node) {
        return nodes.track(NatsJobStore.start(nodes.connect(node)));
    }

    static JobRecord job(String id, Instant submitted) {
        return new JobRecord(id, new JobRecord.Spec(JsonMapper.builder().build().readTree("{\"template\":\"ping-pong\"}"), "n", "ping-pong",
                5, 3, 1000, 4, submitted, null, null, null), JobRecord.Status.queued(submitted));
    }

    static JobRecord job(String id) {
        return job(id, Instant.now());
    }

    /**
     * The writer's own watch reuses the record it wrote instead of decoding its echo; it must see
     * exactly what another node decodes from the same writes, including two writes of one key in
     * quick succession (the second may be under way before the first's echo) and a lost
     * compare-and-set (no echo).
     */
    @Test
    void theWriterAndAnotherNodeWatchTheSameRecords() throws Exception {
        NatsJobStore a = store("a");
        NatsJobStore b = store("b");
        java.util.List<JobRecord> seenByA = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.List<JobRecord> seenByB = new java.util.concurrent.CopyOnWriteArrayList<>();
        a.watchAll((id, r) -> seenByA.add(r));
        b.watchAll((id, r) -> seenByB.add(r));
        Instant t = Instant.parse("2026-12-05T12:00:00.123456789Z");
        for (int i = 0; i < 20; i++) {
            JobRecord r = job("echo-" + i, t);
            Versioned<JobRecord> v = a.create(r).orElseThrow();
            JobRecord running = r.withStatus(r.status().claimed("a", t.plusMillis(1)));
            Versioned<JobRecord> w = a.replace(running, v.revision()).orElseThrow();
            assertThat(a.replace(running, v.revision())).as("a lost compare-and-set").isEmpty();
            a.replace(running.withStatus(running.status().finished(JobState.SUCCEEDED, t.plusMillis(2), new JobRecord.Counters(1, 2, 3, 4),
                    JsonNodeFactory.instance.objectNode().put("v", i), null)), w.revision()).orElseThrow();
        }
        long end = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        while ((seenByA.size() < 60 || seenByB.size() < 60) && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(seenByA).hasSize(60);
        assertThat(seenByA).as("the writer's own watch, record for record").isEqualTo(seenByB);
    }

    @Test
    void aRecordRoundTripsWithEveryField() {
        NatsJobStore s = store("a");
        JobRecord r = job("job-1");
        JobRecord.Status st = r.status().claimed("a", Instant.now()).finished(JobState.SUCCEEDED, Instant.now(),
                new JobRecord.Counters(1, 2, 3, 4), JsonNodeFactory.instance.nullNode(), null);
        JobRecord done = r.withStatus(st);
        s.create(r);
        Versioned<JobRecord> v = s.get("job-1").orElseThrow();
        assertThat(s.replace(done, v.revision())).isPresent();
        JobRecord back = s.get("job-1").orElseThrow().value();
        assertThat(back).isEqualTo(done);
        assertThat(back.status().lastReceived()).as("a received JSON null is a value, not 'none'").isNotNull();
    }





    @Test
    void everyNodesIndexListsJobsWrittenOnAnother() {
        NatsJobStore a = store("a");
        NatsJobStore b = store("b");
        for (int i = 0; i < 50; i++) {
            a.create(job("job-" + i));
        }
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> b.list().size() == 50)).isTrue();
        assertThat(b.list()).allSatisfy(v -> assertThat(v.value().spec().request()).as("summaries carry no body").isNull());
        NatsJobStore late = store("c");
        assertThat(late.list()).as("a node started later loads the index before it serves").hasSize(50);
    }

    @Test
    void retentionRemovesTheOldestFinishedJobsAndTheirKeysByCompareAndSet() {
        NatsJobStore s = store("a");
        Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
        for (int i = 0; i < 6; i++) {
            String id = "job-" + i;
            JobRecord r = job(id, t0);
            JobRecord withKey = new JobRecord(id, new JobRecord.Spec(r.spec().request(), null, null, 5, 1, 1000, 1, t0, null, "key-" + i, "h"),
                    r.status());
            Versioned<JobRecord> v = s.create(withKey).orElseThrow();
            s.claimKey("key-" + i, new IdempotencyEntry(id, "h"));
            if (i < 5) { // job-5 stays queued
                JobRecord.Status fin = v.value().status().claimed("a", t0).finished(JobState.SUCCEEDED, t0.plusSeconds(i), null, null, null);
                s.replace(v.value().withStatus(fin), v.revision());
            }
        }
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.list().size() == 6)).isTrue();
        assertThat(s.evict(3, t0.plusSeconds(-1))).as("keep the 3 newest finished").isEqualTo(2);
        assertThat(s.get("job-0")).isEmpty();
        assertThat(s.get("job-1")).isEmpty();
        assertThat(s.key("key-0")).as("the key lives exactly as long as its job").isEmpty();
        assertThat(s.get("job-2")).isPresent();
        assertThat(Await.holdsWithin(Duration.ofSeconds(5), () -> s.list().size() == 4)).isTrue();
        assertThat(s.evict(100, t0.plusSeconds(4))).as("finished before t0+4s").isEqualTo(2);
        assertThat(s.get("job-4")).isPresent();
        assertThat(s.get("job-5")).as("never a job that is not finished").isPresent();
    }


    @Test
    void aFullStoreRefusesNewJobs() {
        ClusterProperties small = new ClusterProperties(new ClusterProperties.Nats(nats.url()), "a", Duration.ofSeconds(1), 3, 1,
                Duration.ofSeconds(10), Duration.ofMillis(300), Duration.ofMillis(500), DataSize.ofMegabytes(64), DataSize.ofMegabytes(1), true);
        NatsJobStore s = nodes.track(NatsJobStore.start(nodes.connect(small)));
        String big = "x".repeat(30_000);
        assertThatThrownBy(() -> {
            for (int i = 0; i < 1000; i++) {
                JobRecord r = job("job-" + i);
                s.create(new JobRecord(r.id(), new JobRecord.Spec(JsonNodeFactory.instance.textNode(big), null, null, 5, 1, 1, 1,
                        Instant.now(), null, null, null), r.status()));
            }
        }).isInstanceOf(BackendFullException.class).hasMessageContaining("max-store-bytes");
    }

    @Test
    void whileNatsIsDownReadsAndWritesFailFastWithUnavailable() {
        assumeTrue(nats.restartKeepsUrl(), "needs a server that comes back on the same address");
        NatsJobStore s = store("a");
        s.create(job("job-1"));
        nats.kill();
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> {
            try {
                s.get("job-1");
                return false;
            } catch (BackendUnavailableException e) {
                return true;
            }
        })).isTrue();
        assertThatThrownBy(() -> s.create(job("job-2"))).isInstanceOf(BackendUnavailableException.class);
        nats.restart();
        assertThat(Await.holdsWithin(Duration.ofSeconds(20), () -> {
            try {
                return s.get("job-1").isPresent();
            } catch (BackendUnavailableException e) {
                return false;
            }
        })).as("reconnected by itself, record intact").isTrue();
        s.create(job("job-3"));
        assertThat(Await.holdsWithin(Duration.ofSeconds(10), () -> s.list().size() == 2)).as("the index feed resumed after the restart").isTrue();
    }

    @Test
    void aKilledServerRestartsWithEveryRecordAndKey() {
        NatsJobStore s = store("a");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String id = UUID.randomUUID().toString();
            ids.add(id);
            s.create(job(id));
            s.claimKey("k" + i, new IdempotencyEntry(id, "h"));
        }
        nodes.close();
        nats.kill();
        nats.restart();
        NatsJobStore after = store("b");
        assertThat(after.list()).hasSize(100);
        for (int i = 0; i < 100; i++) {
            assertThat(after.get(ids.get(i))).isPresent();
            assertThat(after.key("k" + i).orElseThrow().value().jobId()).isEqualTo(ids.get(i));
        }
    }

}
