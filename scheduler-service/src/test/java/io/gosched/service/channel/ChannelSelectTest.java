package io.gosched.service.channel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Received;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.service.ServiceProperties;
import io.gosched.service.ServiceShutdown;
import io.gosched.service.budget.HeldValue;
import io.gosched.service.budget.Retained;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.channel.spi.ChannelOutcome;
import io.gosched.service.channel.spi.LocalSelect;
import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.testing.TestChannels;
import io.gosched.service.testing.TestProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.IntNode;

/**
 * The stop of a select racing the partners that would make a case fire, on 2 Ps, many rounds
 * with random delays: either a case fired (and its partner completed with that very value) or
 * the stop won (and the partner's pending operation can still be withdrawn: nothing was taken or
 * delivered). Never both, never neither.
 */
class ChannelSelectTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    final GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
    final ServiceProperties properties = TestProperties.service(Map.of());
    final ServiceMetrics metrics = new ServiceMetrics(null);
    final ServiceBudget budget = ServiceBudget.of(properties, metrics);
    final ChannelService channels = TestChannels.soleNode(properties, metrics, budget);
    final ChannelSelect select = new ChannelSelect(channels, rt, metrics, budget, new ServiceShutdown());

    @AfterEach
    void close() {
        rt.close();
    }

    private static void spin(int max) {
        int n = ThreadLocalRandom.current().nextInt(max);
        for (int i = 0; i < n; i++) {
            Thread.onSpinWait();
        }
    }

    @Test
    void aStopRacingASenderEndsWithExactlyOneOutcome() throws Exception {
        channels.registry().create("x", 0);
        channels.registry().create("y", 0);
        List<ChannelOutcome.SelectCase> cases = List.of(new ChannelOutcome.SelectCase("x", false, null),
                new ChannelOutcome.SelectCase("y", false, null));
        int fired = 0;
        int stopped = 0;
        for (int i = 0; i < 2000 * STRESS; i++) {
            LocalSelect.Running run = select.start(cases);
            String to = i % 2 == 0 ? "x" : "y";
            CompletableFuture<Void> send = channels.registry().send(to, IntNode.valueOf(i));
            spin(2000);
            run.stop("timeout");
            ChannelOutcome.Select s = run.result().get(10, TimeUnit.SECONDS);
            if (s.fired()) {
                fired++;
                assertThat(s.index()).as("round %d", i).isEqualTo(i % 2);
                assertThat(s.value().asInt()).isEqualTo(i);
                assertThat(s.ok()).isTrue();
                send.get(10, TimeUnit.SECONDS); // the partner completed: delivered
            } else {
                stopped++;
                assertThat(s.reason()).isEqualTo("timeout");
                assertThat(send.cancel(false)).as("round %d: the select stopped, so the send is still pending", i).isTrue();
            }
            assertThat(channels.registry().get("x").chan().waitingReceivers() + channels.registry().get("y").chan().waitingReceivers())
                    .as("round %d: no case left waiting", i).isZero();
        }
        assertThat(fired).as("fired").isPositive();
        assertThat(stopped).as("stopped").isPositive();
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).isZero();
    }

    @Test
    void aStopRacingAReceiverEndsWithExactlyOneOutcome() throws Exception {
        channels.registry().create("z", 0);
        channels.registry().create("never", 0);
        int fired = 0;
        int stopped = 0;
        for (int i = 0; i < 2000 * STRESS; i++) {
            LocalSelect.Running run = select.start(List.of(new ChannelOutcome.SelectCase("never", false, null),
                    new ChannelOutcome.SelectCase("z", true, IntNode.valueOf(i))));
            CompletableFuture<Received<Object>> recv = channels.registry().recv("z");
            spin(2000);
            run.stop("gone");
            ChannelOutcome.Select s = run.result().get(10, TimeUnit.SECONDS);
            if (s.fired()) {
                fired++;
                assertThat(s.index()).isEqualTo(1);
                assertThat(HeldValue.take(recv.get(10, TimeUnit.SECONDS).value()).asInt()).as("round %d", i).isEqualTo(i);
            } else {
                stopped++;
                assertThat(recv.cancel(false)).as("round %d: the select stopped, so nothing was sent", i).isTrue();
            }
            assertThat(channels.registry().get("z").chan().waitingSenders()).as("round %d", i).isZero();
        }
        assertThat(fired).as("fired").isPositive();
        assertThat(stopped).as("stopped").isPositive();
        assertThat(budget.memory().held(Retained.PENDING_SENDS)).as("every unsent value's charge went back").isZero();
        assertThat(channels.registry().get("z").share().used()).isZero();
    }
}
