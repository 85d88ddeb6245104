package io.gosched.cluster.job;

import io.gosched.service.job.spi.IdempotencyEntry;
import io.gosched.service.job.spi.JobRecord;
import io.gosched.service.job.spi.JobStore;
import tools.jackson.databind.json.JsonMapper;

/**
 * Job records, idempotency entries and progress as JSON in KV values and messages: readable with
 * {@code nats kv get}, and tolerant of fields a newer node adds (unknown ones are ignored).
 */
final class JobRecordCodec {

    private static final JsonMapper JSON = JsonMapper.builder()
            .disable(tools.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .changeDefaultPropertyInclusion(v -> v.withValueInclusion(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL))
            .build();

    private JobRecordCodec() {}

    static byte[] encode(JobRecord r) {
        return JSON.writeValueAsBytes(r);
    }

    static JobRecord decode(byte[] b) {
        return JSON.readValue(b, JobRecord.class);
    }

    static byte[] encode(IdempotencyEntry e) {
        return JSON.writeValueAsBytes(e);
    }

    static IdempotencyEntry decodeEntry(byte[] b) {
        return JSON.readValue(b, IdempotencyEntry.class);
    }

    static byte[] encode(JobStore.Progress p) {
        return JSON.writeValueAsBytes(p);
    }

    static JobStore.Progress decodeProgress(byte[] b) {
        return JSON.readValue(b, JobStore.Progress.class);
    }
}
