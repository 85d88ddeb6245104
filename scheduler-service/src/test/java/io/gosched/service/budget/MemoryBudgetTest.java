package io.gosched.service.budget;

import io.gosched.service.budget.ServiceBudget;

import io.gosched.service.budget.Retained;

import io.gosched.service.budget.OpenLimit;

import io.gosched.service.budget.MemoryBudget;

import io.gosched.service.budget.JsonSize;

import io.gosched.service.budget.HeldValue;

import io.gosched.service.budget.ByteShare;

import io.gosched.service.error.RefusedException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.testing.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.JsonNodeFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The budget's rules without HTTP: fit or refuse, reclaim first, force what was accepted, wake waiters. */
class MemoryBudgetTest {

    static final int STRESS = Integer.getInteger("gosched.stress", 1);

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final MemoryBudget budget = new MemoryBudget(1000, Duration.ofSeconds(2), new ServiceMetrics(registry));

    @Test
    void chargesFitOrAreRefusedWithAProblemNamingTheBudgetItsSizeAndItsHolders() {
        budget.charge(Retained.CHANNELS, 600);
        budget.charge(Retained.QUEUED_JOBS, 300);
        assertThat(budget.tryCharge(Retained.PENDING_SENDS, 101)).isFalse();
        assertThat(budget.used()).isEqualTo(900);
        assertThatThrownBy(() -> budget.charge(Retained.PENDING_SENDS, 200)).isInstanceOfSatisfying(RefusedException.class, p -> {
            assertThat(p.reason()).isEqualTo(RefusedException.Reason.MEMORY_BUDGET);
            assertThat(p.retryAfter()).isEqualTo(Duration.ofSeconds(2));
            Map<String, Object> m = p.members();
            assertThat(m).containsEntry("budget", "gosched.api.limits.max-retained-bytes").containsEntry("budgetBytes", 1000L)
                    .containsEntry("usedBytes", 900L).containsEntry("requestedBytes", 200L).containsEntry("kind", "pending_sends");
            @SuppressWarnings("unchecked")
            Map<String, Long> heldBy = (Map<String, Long>) m.get("heldBy");
            assertThat(heldBy).containsEntry("channels", 600L).containsEntry("queued_jobs", 300L).containsEntry("streams", 0L);
            assertThat(p.getMessage()).contains("1000 bytes", "100 bytes free", "needs 200", "channels 600", "queued_jobs 300");
        });
        budget.release(Retained.CHANNELS, 600);
        assertThat(budget.tryCharge(Retained.PENDING_SENDS, 200)).isTrue();
        assertThat(budget.heldBy()).containsEntry("pending_sends", 200L).containsEntry("channels", 0L);
        assertThat(registry.get("gosched.api.budget.refusals").tag("budget", "max-retained-bytes").counter().count()).isEqualTo(1);
    }

    @Test
    void reclaimersAreAskedForWhatIsMissingBeforeARefusal() {
        AtomicLong evictable = new AtomicLong(500);
        budget.force(Retained.FINISHED_JOBS, 500);
        List<Long> asked = new ArrayList<>();
        budget.addReclaimer(wanted -> {
            asked.add(wanted);
            long n = Math.min(wanted, evictable.get());
            evictable.addAndGet(-n);
            budget.release(Retained.FINISHED_JOBS, n);
            return n;
        });
        budget.charge(Retained.CHANNELS, 400);
        assertThat(asked).isEmpty();
        budget.charge(Retained.CHANNELS, 300); // 200 missing
        assertThat(asked).containsExactly(200L);
        assertThat(budget.held(Retained.FINISHED_JOBS)).isEqualTo(300);
        assertThatThrownBy(() -> budget.charge(Retained.CHANNELS, 400)).isInstanceOf(RefusedException.class);
        assertThat(budget.held(Retained.FINISHED_JOBS)).as("everything evictable went first").isZero();
        assertThat(budget.used()).isEqualTo(700);
    }

    @Test
    void forcedBytesMayGoOverAndAskTheReclaimersAtOnce() {
        AtomicLong asked = new AtomicLong();
        budget.addReclaimer(wanted -> {
            asked.set(wanted);
            return 0;
        });
        budget.charge(Retained.CHANNELS, 900);
        budget.force(Retained.FINISHED_JOBS, 300); // a result that was already held: never refused
        assertThat(budget.used()).isEqualTo(1200);
        assertThat(asked.get()).isEqualTo(200);
        assertThat(budget.tryCharge(Retained.CHANNELS, 1)).as("new work waits until it is back under").isFalse();
        budget.release(Retained.CHANNELS, 201);
        assertThat(budget.tryCharge(Retained.CHANNELS, 1)).isTrue();
    }

    @Test
    void movesChangeTheHolderNotTheTotal() {
        budget.charge(Retained.QUEUED_JOBS, 100);
        budget.move(Retained.QUEUED_JOBS, Retained.RUNNING_JOBS, 100);
        assertThat(budget.used()).isEqualTo(100);
        assertThat(budget.heldBy()).containsEntry("queued_jobs", 0L).containsEntry("running_jobs", 100L);
    }

    @Test
    void aShareRefusesBeforeTheBudgetAndNamesItsHolder() {
        ByteShare share = new ByteShare(budget, MemoryBudget.MAX_CHANNEL_BYTES, 300, "channel 'a'");
        share.charge(Retained.CHANNELS, 250);
        assertThatThrownBy(() -> share.charge(Retained.CHANNELS, 100)).isInstanceOfSatisfying(RefusedException.class, p -> {
            assertThat(p.reason()).isEqualTo(RefusedException.Reason.MEMORY_BUDGET);
            assertThat(p.members()).containsEntry("budget", MemoryBudget.MAX_CHANNEL_BYTES).containsEntry("budgetBytes", 300L)
                    .containsEntry("usedBytes", 250L).containsEntry("heldBy", Map.of("channel 'a'", 250L));
        });
        budget.charge(Retained.QUEUED_JOBS, 720);
        assertThat(share.tryCharge(Retained.CHANNELS, 40)).isEqualTo(ByteShare.Outcome.BUDGET_FULL);
        assertThat(share.used()).as("a refused charge leaves the share as it was").isEqualTo(250);
        share.release(Retained.CHANNELS, 250);
        assertThat(budget.used()).isEqualTo(720);
        assertThat(registry.get("gosched.api.budget.refusals").tag("budget", "max-channel-bytes").counter().count()).isEqualTo(1);
    }

    @Test
    void aHeldValueIsReleasedOnceWhicheverWayItLeaves() {
        MemoryBudget big = new MemoryBudget(1 << 20, Duration.ofSeconds(1), new ServiceMetrics(null));
        ByteShare share = new ByteShare(big, MemoryBudget.MAX_CHANNEL_BYTES, 1 << 20, "channel 'v'");
        HeldValue v = HeldValue.offer(share, JsonNodeFactory.instance.stringNode("x".repeat(1000)));
        assertThat(v.bytes()).isEqualTo(JsonSize.of(v.value()) + HeldValue.SIZE);
        assertThat(big.held(Retained.PENDING_SENDS)).isEqualTo(v.bytes());
        v.buffered();
        assertThat(big.heldBy()).containsEntry("pending_sends", 0L).containsEntry("channels", v.bytes());
        v.take();
        v.take();
        v.buffered(); // a sender hearing late that its value was delivered: nothing to move
        assertThat(big.used()).isZero();
        v.requeue(); // its receiver went away: back in, forced
        assertThat(big.held(Retained.PENDING_SENDS)).isEqualTo(v.bytes());
        v.withdraw();
        assertThat(big.used()).isZero();
        assertThat(share.used()).isZero();
    }

    @Test
    void whenFreedNeverMissesARelease() throws Exception {
        // Waiters register, then try; releasers release, then run the listeners: no waiter may sleep through a release.
        MemoryBudget b = new MemoryBudget(10, Duration.ofSeconds(1), new ServiceMetrics(null));
        int rounds = 20_000 * STRESS;
        AtomicInteger stuck = new AtomicInteger();
        Thread waiter = new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                while (true) {
                    if (b.tryCharge(Retained.CHANNELS, 10)) {
                        break;
                    }
                    CountDownLatch freed = new CountDownLatch(1);
                    b.whenFreed(freed::countDown);
                    if (b.tryCharge(Retained.CHANNELS, 10)) {
                        break;
                    }
                    try {
                        if (!freed.await(5, java.util.concurrent.TimeUnit.SECONDS)) {
                            stuck.incrementAndGet();
                            return;
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                b.release(Retained.CHANNELS, 10);
            }
        });
        Thread rival = new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                while (!b.tryCharge(Retained.CHANNELS, 10)) {
                    Thread.onSpinWait();
                }
                b.release(Retained.CHANNELS, 10);
            }
        });
        waiter.start();
        rival.start();
        waiter.join(60_000);
        rival.join(60_000);
        assertThat(stuck.get()).as("waits that missed a release").isZero();
        assertThat(b.used()).isZero();
    }

    @Test
    void openLimitsRefuseBeyondTheirCountAndChargeTheBudget() {
        OpenLimit calls = new OpenLimit(ServiceBudget.MAX_PENDING_CHANNEL_CALLS, 2, "HTTP channel calls", Retained.CHANNEL_CALLS, 100, budget);
        calls.acquire();
        calls.acquire();
        assertThatThrownBy(calls::acquire).isInstanceOfSatisfying(RefusedException.class, p -> {
            assertThat(p.reason()).isEqualTo(RefusedException.Reason.TOO_MANY_OPEN);
            assertThat(p.members()).containsEntry("limit", ServiceBudget.MAX_PENDING_CHANNEL_CALLS).containsEntry("max", 2);
        });
        assertThat(budget.held(Retained.CHANNEL_CALLS)).isEqualTo(200);
        calls.release();
        budget.charge(Retained.CHANNELS, 850);
        assertThatThrownBy(calls::acquire).as("the budget bounds them too").isInstanceOfSatisfying(RefusedException.class,
                p -> assertThat(p.members()).containsEntry("budget", MemoryBudget.MAX_RETAINED_BYTES));
        assertThat(calls.open()).isEqualTo(1);
        calls.release();
        assertThat(budget.held(Retained.CHANNEL_CALLS)).isZero();
    }

    @Test
    void theDefaultIsHalfTheHeapAndABudgetTheHeapCannotHoldStopsTheStart() {
        long heap = 256L << 20;
        MemoryBudget.Sizes d = MemoryBudget.Sizes.of(TestProperties.service(Map.of()).limits(), heap);
        assertThat(d.maxRetainedBytes()).isEqualTo(heap / 2);
        assertThat(d.maxChannelBytes()).isEqualTo(heap / 16);
        assertThat(d.maxJobBytes()).isEqualTo(heap / 8);
        MemoryBudget.Sizes set = MemoryBudget.Sizes.of(TestProperties.service(Map.of("gosched.api.limits.max-retained-bytes", "100000000",
                "gosched.api.limits.max-channel-bytes", "1000000")).limits(), heap);
        assertThat(set).isEqualTo(new MemoryBudget.Sizes(100_000_000, 1_000_000, 25_000_000));
        assertThatThrownBy(() -> MemoryBudget.Sizes.of(TestProperties.service(Map.of("gosched.api.limits.max-retained-bytes",
                Long.toString(heap))).limits(), heap))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("max-retained-bytes=" + heap)
                .hasMessageContaining("80% of the max heap (" + heap);
        assertThatThrownBy(() -> MemoryBudget.Sizes.of(TestProperties.service(Map.of("gosched.api.limits.max-retained-bytes", "10000000",
                "gosched.api.limits.max-job-bytes", "20000000")).limits(), heap))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("max-job-bytes=20000000");
    }
}
