package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.Versioned;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.JsonNodeFactory;

/** The copies a claim starts from: kept until the claim, dropped by any later write, bounded. */
class CreatedHereTest {

    static final Instant NOW = Instant.parse("2026-12-05T12:00:00Z");
    static final JobSpec SPEC = new JobSpec(null, null, null, 0, JobSpec.DEFAULT_PRIORITY, null, JobSpec.RetryPolicy.NONE, null);

    static Versioned<JobRecord> created(String id, long revision) {
        return new Versioned<>(new JobRecord(id, new JobRecord.Spec(JsonNodeFactory.instance.objectNode(), null, null, 0, 1, 1_000, 1,
                NOW, null, null, null), JobRecord.Status.queued(NOW)), revision);
    }

    @Test
    void theEchoOfTheCreationKeepsTheCopyAndAnyOtherWriteDropsIt() {
        CreatedHere c = new CreatedHere();
        Versioned<JobRecord> a = created("a", 1);
        Versioned<JobRecord> b = created("b", 2);
        c.put(a, SPEC, 100);
        c.put(b, SPEC, 100);

        // the watch delivers the creation itself, decoded: an equal record, not the same object
        c.changed("a", new JobRecord("a", a.value().spec(), JobRecord.Status.queued(NOW)));
        assertThat(c.peek("a")).as("the creation's echo").isNotNull();

        c.changed("a", a.value().withStatus(a.value().status().claimed("another-node", NOW.plusSeconds(1))));
        assertThat(c.peek("a")).as("a write after the creation: claimed by another node").isNull();
        c.changed("b", null);
        assertThat(c.peek("b")).as("a removal").isNull();
        assertThat(c.size()).isZero();
    }

    @Test
    void aClaimTakesItsCopyOnce() {
        CreatedHere c = new CreatedHere();
        c.put(created("a", 7), SPEC, 100);
        CreatedHere.Copy copy = c.take("a");
        assertThat(copy.record().revision()).isEqualTo(7);
        assertThat(copy.spec()).isSameAs(SPEC);
        assertThat(c.take("a")).isNull();
    }

    @Test
    void copiesStayWithinTheirBytesAndCount() {
        CreatedHere c = new CreatedHere();
        long big = CreatedHere.MAX_BYTES / 2;
        c.put(created("a", 1), SPEC, big);
        c.put(created("b", 2), SPEC, big);
        c.put(created("c", 3), SPEC, big);
        assertThat(c.peek("c")).as("past the bytes: read back at claim instead").isNull();
        c.take("a");
        c.put(created("c", 3), SPEC, big);
        assertThat(c.peek("c")).as("room again once a copy was taken").isNotNull();

        CreatedHere many = new CreatedHere();
        for (int i = 0; i < CreatedHere.MAX_COPIES + 10; i++) {
            many.put(created("j" + i, i + 1), SPEC, 1);
        }
        assertThat(many.size()).isEqualTo(CreatedHere.MAX_COPIES);
    }
}
