package io.gosched.service.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import io.gosched.service.job.spi.JobRecord;
import org.junit.jupiter.api.Test;

/** The one function from a job to its meters' {@code type} tag. */
class JobTypeTest {

    private static JobRecord.Spec record(String template, String kind) {
        return new JobRecord.Spec(null, null, template, 5, 1, 1000, 1, Instant.EPOCH, null, null, null, null, null, null, kind);
    }

    @Test
    void eachKindOfJobHasItsType() {
        assertThat(JobType.of(record(null, null))).isEqualTo("dsl");
        assertThat(JobType.of(record("ping-pong", null))).isEqualTo("template:ping-pong");
        assertThat(JobType.of(record(null, "http"))).isEqualTo("http");
        assertThat(JobType.of(record(null, "handler:resize-image"))).isEqualTo("handler:resize-image");
    }

    @Test
    void whatItDoesNotKnowIsDsl() {
        assertThat(JobType.of((JobRecord.Spec) null)).isEqualTo("dsl");
        assertThat(JobType.of(record(null, "cron"))).as("a kind of a later version").isEqualTo("dsl");
        assertThat(JobType.of(record(null, "handler:"))).as("a handler without a name").isEqualTo("dsl");
        assertThat(JobType.of(record("", null))).isEqualTo("dsl");
        assertThat(JobType.of("http", "ping-pong")).as("what runs decides: the kind wins over a template").isEqualTo("http");
    }
}
