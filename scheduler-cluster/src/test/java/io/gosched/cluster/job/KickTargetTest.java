package io.gosched.cluster.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.service.job.spi.JobTicket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Kicks name their ticket's consumer by its place in the pull order; what cannot be placed is UNKNOWN. */
class KickTargetTest {

    @Test
    void aReadyTicketsKickNamesItsPriorityInPullOrder() {
        for (int p = 0; p <= 9; p++) {
            byte[] kick = KickTarget.payload(JobTicket.first("j", p, null));
            assertThat(kick).as("the one-byte format of earlier versions").containsExactly((byte) p);
            assertThat(KickTarget.consumerIndex(kick, "a")).as("priority %d", p).isEqualTo(1 + 9 - p);
        }
    }

    @Test
    void aPinnedTicketsKickNamesThePinnedConsumerOfItsNodeOnly() {
        byte[] kick = KickTarget.payload(new JobTicket("j", 1, 4, null, "web-2"));
        assertThat(KickTarget.consumerIndex(kick, "web-2")).isZero();
        assertThat(KickTarget.consumerIndex(kick, "web-1")).isEqualTo(KickTarget.NOT_MINE);
        assertThat(KickTarget.consumerIndex(kick, "web-22")).isEqualTo(KickTarget.NOT_MINE);
    }

    @Test
    void whatCannotBePlacedIsUnknown() {
        assertThat(KickTarget.consumerIndex(null, "a")).isEqualTo(KickTarget.UNKNOWN);
        assertThat(KickTarget.consumerIndex(new byte[0], "a")).isEqualTo(KickTarget.UNKNOWN);
        assertThat(KickTarget.consumerIndex(new byte[] {10}, "a")).isEqualTo(KickTarget.UNKNOWN);
        assertThat(KickTarget.consumerIndex(new byte[] {-1}, "a")).isEqualTo(KickTarget.UNKNOWN);
        assertThat(KickTarget.consumerIndex("n:".getBytes(StandardCharsets.US_ASCII), "a")).isEqualTo(KickTarget.UNKNOWN);
        assertThat(KickTarget.consumerIndex("hello".getBytes(StandardCharsets.US_ASCII), "a")).isEqualTo(KickTarget.UNKNOWN);
    }
}
