package io.gosched.service.channel;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.channel.ChannelService;

import io.gosched.service.error.RefusedException;

import io.gosched.service.error.ConflictException;

import io.gosched.service.error.ShuttingDownException;

import java.time.Duration;
import java.util.Map;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.testing.TestProperties;
import io.gosched.runtime.Received;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import tools.jackson.databind.node.JsonNodeFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The withdrawal rules of HTTP sends and receives, without HTTP. */
class ChannelServiceTest {

    final ServiceProperties properties = TestProperties.service(Map.of());
    final ServiceMetrics metrics = new ServiceMetrics(null);
    final ChannelService channels = TestChannels.soleNode(properties, metrics, ServiceBudget.of(properties, metrics));
    final JsonNodeFactory f = JsonNodeFactory.instance;

    @Test
    void aTimedOutSendIsWithdrawnAndNeverDelivered() {
        channels.registry().create("a", 0);
        StepVerifier.create(channels.send("a", f.numberNode(1), Duration.ofMillis(20)))
                .assertNext(r -> assertThat(r).isEqualTo(new ChannelService.SendResult(false, "timeout"))).verifyComplete();
        assertThat(channels.registry().view(channels.registry().get("a")).waitingSenders()).isZero();
        assertThat(channels.registry().lookup("a").tryRecv()).as("nothing left behind").isNull();
    }

    @Test
    void aCancelledSendIsWithdrawnToo() {
        channels.registry().create("b", 0);
        Disposable d = channels.send("b", f.numberNode(1), Duration.ofSeconds(30)).subscribe();
        assertThat(channels.registry().view(channels.registry().get("b")).waitingSenders()).isEqualTo(1);
        d.dispose(); // the client hung up
        assertThat(channels.registry().view(channels.registry().get("b")).waitingSenders()).isZero();
        assertThat(channels.registry().lookup("b").tryRecv()).isNull();
    }

    @Test
    void aCancelledReceiveTakesNothing() {
        channels.registry().create("c", 0);
        Disposable d = channels.recv("c", Duration.ofSeconds(30)).subscribe();
        assertThat(channels.registry().view(channels.registry().get("c")).waitingReceivers()).isEqualTo(1);
        d.dispose();
        assertThat(channels.registry().view(channels.registry().get("c")).waitingReceivers()).isZero();
        assertThat(channels.registry().lookup("c").trySend(f.numberNode(5))).as("no receiver is left to take it").isFalse();
    }

    @Test
    void aValueThatBeatsTheTimerIsReturned() {
        channels.registry().create("d", 1);
        channels.registry().lookup("d").trySend(f.stringNode("x"));
        StepVerifier.create(channels.recv("d", Duration.ZERO))
                .assertNext(r -> assertThat(r).isEqualTo(new ChannelService.RecvResult(true, f.stringNode("x"), true, null)))
                .verifyComplete();
    }

    @Test
    void shutdownAnswersPendingCallsAndRefusesNewOnes() {
        channels.registry().create("e", 0);
        StepVerifier.create(channels.recv("e", Duration.ofSeconds(30)))
                .then(channels::beginShutdown)
                .assertNext(r -> assertThat(r.reason()).isEqualTo("shutdown"))
                .verifyComplete();
        assertThatThrownBy(() -> channels.send("e", f.numberNode(1), Duration.ofSeconds(1))).isInstanceOf(ShuttingDownException.class);
        assertThatThrownBy(() -> channels.registry().create("f", 0)).isInstanceOf(ShuttingDownException.class);
    }

    @Test
    void closeWakesPendingReceiversWithOkFalseAndFailsSenders() {
        channels.registry().create("g", 0);
        StepVerifier.create(channels.recv("g", Duration.ofSeconds(30)))
                .then(() -> channels.registry().close("g"))
                .assertNext(r -> assertThat(r).isEqualTo(new ChannelService.RecvResult(true, null, false, null)))
                .verifyComplete();
        channels.registry().create("h", 0);
        StepVerifier.create(channels.send("h", f.numberNode(1), Duration.ofSeconds(30)))
                .then(() -> channels.registry().delete("h"))
                .expectErrorSatisfies(e -> assertThat(((ConflictException) e).reason()).isEqualTo(ConflictException.Reason.CHANNEL_CLOSED))
                .verify(Duration.ofSeconds(5));
        Received<Object> closed = channels.registry().lookup("g").tryRecv();
        assertThat(closed.ok()).isFalse();
    }

    @Test
    void aBudgetFilledToTheBrimStillLetsValuesBeReceived() {
        ServiceProperties small = TestProperties.service(Map.of("gosched.api.limits.max-retained-bytes", "1048576",
                "gosched.api.limits.max-channel-bytes", "1048576"));
        ServiceBudget budget = ServiceBudget.of(small, metrics);
        ChannelService tight = TestChannels.soleNode(small, metrics, budget);
        tight.registry().create("brim", 100_000);
        int sent = 0;
        while (true) {
            try {
                tight.send("brim", f.stringNode("v".repeat(1000)), Duration.ZERO).block();
                sent++;
            } catch (RefusedException full) {
                break;
            }
        }
        // Whatever room is left, a job takes: not one byte is free.
        budget.memory().force(Retained.QUEUED_JOBS, budget.memory().max() - budget.memory().used());
        assertThat(budget.memory().used()).isEqualTo(budget.memory().max());
        for (int i = 0; i < sent; i++) {
            ChannelService.RecvResult r = tight.recv("brim", Duration.ZERO).block();
            assertThat(r.received()).as("receive %d of %d from a full budget", i, sent).isTrue();
        }
        assertThat(budget.memory().held(Retained.CHANNELS)).as("only the channel's slots are left")
                .isEqualTo(ChannelRegistry.CHANNEL_BYTES + io.gosched.service.budget.JsonSize.layout().refArray(100_000));
        assertThat(budget.memory().held(Retained.CHANNEL_CALLS)).isZero();
    }
}
