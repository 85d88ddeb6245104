package io.gosched.api.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.LatencyHistogram;
import io.gosched.runtime.SchedStats;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * GET /api/v1/scheduler writes SchedStats flat, as it did before the core's record grouped its
 * trailing figures: the same field names in the same order, each holding the figure it names.
 */
class SchedulerStatsJsonTest {

    @Test
    void theStatsAreWrittenFlatWithEachFigureUnderItsOldName() {
        SchedStats s = new SchedStats(1, 2, 3, 4, 5, 6, 7, new int[] {8}, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                new SchedStats.Handoffs(18, 19), new SchedStats.GoroutineStates(20, 21, 22),
                new LatencyHistogram(new double[] {Double.POSITIVE_INFINITY}, new long[] {0}, 0, 0), List.of(), 23, 24);
        JsonNode json = JsonMapper.builder().build().valueToTree(SchedulerController.Stats.of(s));
        List<String> names = new ArrayList<>(json.propertyNames());
        assertThat(names).containsExactly("gomaxprocs", "idleProcs", "threads", "spinningThreads", "idleThreads",
                "syscallThreads", "globalRunqueue", "localRunqueues", "goroutines", "spawned", "schedules", "steals",
                "stolenGoroutines", "preemptions", "handoffs", "timersFired", "netpollReady", "preemptHandoffs",
                "syscallHandoffs", "runnableGoroutines", "waitingGoroutines", "syscallGoroutines", "schedLatency", "procs",
                "uptimeNanos", "leakedGoroutines");
        long expected = 1;
        for (String name : names) {
            JsonNode v = json.get(name);
            if (name.equals("localRunqueues")) {
                assertThat(v.get(0).asLong()).as(name).isEqualTo(expected++);
            } else if (!name.equals("schedLatency") && !name.equals("procs")) {
                assertThat(v.asLong()).as(name).isEqualTo(expected++);
            }
        }
    }
}
