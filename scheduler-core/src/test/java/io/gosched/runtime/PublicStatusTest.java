package io.gosched.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The public G and P statuses are enums whose Go names are a contract (GoroutineInfo.state, the
 * HTTP API's state filter, schedtrace, the gosched_procs state tag); the runtime's int statuses
 * decode to them.
 */
class PublicStatusTest {

    @Test
    void goroutineStatesAreGosFourNamesAndRoundTrip() {
        assertThat(Arrays.stream(GoroutineInfo.State.values()).map(GoroutineInfo.State::goName))
                .containsExactly("running", "runnable", "waiting", "syscall");
        for (GoroutineInfo.State s : GoroutineInfo.State.values()) {
            assertThat(GoroutineInfo.State.of(s.goName())).isSameAs(s);
            GoroutineInfo g = new GoroutineInfo(7, s, "", Duration.ZERO, Map.of(), List.of(), 0, null);
            assertThat(g.state()).isEqualTo(s.goName());
            assertThat(Arrays.stream(GoroutineInfo.State.values()).filter(g::is)).containsExactly(s);
        }
        assertThatThrownBy(() -> new GoroutineInfo(7, "RUNNING", "", null, null, null, 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("running, runnable, waiting, syscall");
    }

    @Test
    void procStatusesDecodeTheRuntimesIntsToGosNames() {
        assertThat(Arrays.stream(ProcStats.Status.values()).map(ProcStats.Status::goName))
                .containsExactly("idle", "running", "syscall", "gcstop", "dead");
        int[] codes = {P.IDLE, P.RUNNING, P.SYSCALL, P.GCSTOP, P.DEAD};
        assertThat(Arrays.stream(codes).mapToObj(ProcStats.Status::ofCode)).containsExactly(ProcStats.Status.values());
        for (ProcStats.Status s : ProcStats.Status.values()) {
            assertThat(P.statusName(s.code())).isEqualTo(s.goName());
            assertThat(ProcStats.Status.of(s.goName())).isSameAs(s);
            assertThat(new ProcStats(0, s, 0, 0, 0, -1, -1, -1, 0).status()).isEqualTo(s.goName());
        }
        assertThat(P.statusName(99)).isEqualTo("99"); // schedtrace of a corrupt status still prints
        assertThatThrownBy(() -> new ProcStats(0, "busy", 0, 0, 0, -1, -1, -1, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("idle, running, syscall, gcstop, dead");
    }

    @Test
    void aLiveRuntimeReportsItsPsAndGoroutinesInThoseNames() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            Chan<Integer> never = Chan.make();
            rt.go(never::recv);
            rt.run(() -> {
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (rt.goroutines().stream().noneMatch(g -> g.is(GoroutineInfo.State.WAITING))
                        && System.nanoTime() < deadline) {
                    Go.sleep(Duration.ofMillis(1));
                }
                assertThat(rt.goroutines()).anyMatch(g -> g.is(GoroutineInfo.State.WAITING) && g.waitReason().equals("chan receive"));
                assertThat(rt.goroutines()).anyMatch(g -> g.is(GoroutineInfo.State.RUNNING) && g.id() == Go.goid());
                assertThat(rt.stats().procs()).anyMatch(p -> p.is(ProcStats.Status.RUNNING));
                return null;
            });
            never.close();
        }
    }
}
