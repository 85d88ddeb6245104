package io.gosched.bench.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Trace;
import org.junit.jupiter.api.Test;

/** The tracing-overhead harness at a tiny size: its workloads check their results, it leaves no recording behind. */
class TraceOverheadTest {

    @Test
    void measuresBothWorkloadsInBothTimestampModesAndStopsEveryRecording() throws Exception {
        try (GoRuntime rt = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build())) {
            for (String workload : new String[] {"spawn", "pingpong"}) {
                for (Trace.Timestamps ts : Trace.Timestamps.values()) {
                    String line = TraceOverhead.measure(rt, workload, ts, 4, 500);
                    assertThat(line).startsWith(workload).contains("GOMAXPROCS=2")
                            .contains("trace=" + ts.name().toLowerCase(java.util.Locale.ROOT))
                            .containsPattern("ratio median \\d+\\.\\d{3}");
                    assertThat(rt.trace().isRecording()).isFalse();
                }
                String line = TraceOverhead.measure(rt, workload, null, 4, 500);
                assertThat(line).startsWith(workload).contains("trace=flight").containsPattern("ratio median \\d+\\.\\d{3}");
                assertThat(rt.trace().activeFlightRecorder()).isNull();
            }
            assertThrows(IllegalArgumentException.class, () -> TraceOverhead.run(rt, "nope", 10));
        }
    }
}
