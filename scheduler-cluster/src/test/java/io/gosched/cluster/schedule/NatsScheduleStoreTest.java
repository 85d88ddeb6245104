package io.gosched.cluster.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.cluster.TestNodes;
import io.gosched.cluster.testing.NatsServer;
import io.gosched.service.job.spi.Versioned;
import io.gosched.service.schedule.spi.ScheduleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/** The schedules' KV store on a real nats-server: records round-trip, and compare-and-set lets one writer win per revision. */
class NatsScheduleStoreTest {

    @TempDir
    Path dir;
    NatsServer nats;
    TestNodes nodes;

    @BeforeEach
    void start() {
        nats = NatsServer.start(dir);
        nodes = new TestNodes(nats);
    }

    @AfterEach
    void stop() {
        nodes.close();
        nats.close();
    }

    static ScheduleRecord record(String name) {
        Instant t = Instant.parse("2026-03-01T00:00:00.123Z");
        return new ScheduleRecord(name, null, Duration.ofSeconds(1), "Europe/Berlin",
                JsonMapper.builder().build().readTree("{\"workload\":{\"steps\":[{\"op\":\"yield\"}]}}"), "skip", "run-once", t, t, false,
                t, null, null, true, null);
    }

    @Test
    void aRecordRoundTripsAndIsListedOnEveryNode() throws Exception {
        NatsScheduleStore a = nodes.track(NatsScheduleStore.start(nodes.connect("a")));
        NatsScheduleStore b = nodes.track(NatsScheduleStore.start(nodes.connect("b")));
        ScheduleRecord r = record("s1").firing(Instant.parse("2026-03-01T00:00:01.123Z"), "job-1");
        assertThat(a.create(r)).isPresent();
        assertThat(a.create(r)).as("a name is taken once").isEmpty();
        assertThat(b.get("s1").orElseThrow().value()).isEqualTo(r);
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (b.list().isEmpty() && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(b.list()).extracting(Versioned::value).containsExactly(r);
        assertThat(b.get("no such")).isEmpty();
        // a node started later loads what exists
        NatsScheduleStore c = nodes.track(NatsScheduleStore.start(nodes.connect("c")));
        assertThat(c.list()).extracting(Versioned::value).containsExactly(r);
        Versioned<ScheduleRecord> v = c.get("s1").orElseThrow();
        assertThat(c.remove("s1", v.revision() + 5)).isFalse();
        assertThat(c.remove("s1", v.revision())).isTrue();
        assertThat(a.get("s1")).isEmpty();
        assertThat(c.list()).isEmpty();
    }

    /** Nodes racing to move one record from the same revision: exactly one wins each round. */
    @Test
    void oneCompareAndSetWinsPerRevision() throws Exception {
        List<NatsScheduleStore> stores = new ArrayList<>();
        for (String n : List.of("a", "b", "c")) {
            stores.add(nodes.track(NatsScheduleStore.start(nodes.connect(n))));
        }
        stores.getFirst().create(record("race"));
        for (int round = 1; round <= 30; round++) {
            Versioned<ScheduleRecord> v = stores.getFirst().get("race").orElseThrow();
            AtomicInteger wins = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                NatsScheduleStore s = stores.get(i % 3);
                Instant tick = v.value().cursor().plusSeconds(1);
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (s.replace(v.value().firing(tick, "j" + tick.toEpochMilli()), v.revision()).isPresent()) {
                        wins.incrementAndGet();
                    }
                }));
            }
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
            assertThat(wins.get()).as("round " + round).isEqualTo(1);
        }
        assertThat(stores.get(2).get("race").orElseThrow().value().cursor())
                .isEqualTo(Instant.parse("2026-03-01T00:00:30.123Z"));
    }
}
