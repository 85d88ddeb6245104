package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.Trace;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ChromeTraceTest {

    private static TraceEvent ev(long ts, int p, long goid, Trace.Kind kind, long arg) {
        return new TraceEvent(ts, p, goid, kind, arg, false);
    }

    private static JsonNode roundTrip(List<TraceEvent> events) {
        JsonMapper json = JsonMapper.builder().build();
        return json.readTree(json.writeValueAsString(ChromeTrace.of(events)));
    }

    private static List<JsonNode> select(JsonNode trace, String ph, String name) {
        return trace.get("traceEvents").valueStream()
                .filter(e -> e.get("ph").asString().equals(ph) && (name == null || e.get("name").asString().startsWith(name)))
                .toList();
    }

    /** pprof labels are Perfetto args of the goroutine's slices and instants, and only of its. */
    @Test
    void goroutineLabelsAreArgsOfItsSlicesAndInstants() {
        JsonMapper json = JsonMapper.builder().build();
        JsonNode trace = json.readTree(json.writeValueAsString(ChromeTrace.of(List.of(
                ev(100, 0, 5, Trace.Kind.GO_CREATE, 1),
                ev(1_000, 0, 5, Trace.Kind.GO_START, 0),
                ev(4_000, 0, 5, Trace.Kind.GO_PARK, 3),
                ev(5_000, 0, 6, Trace.Kind.GO_START, 0),
                ev(6_000, 0, 6, Trace.Kind.GO_END, 0)), 0, io.gosched.runtime.Trace.Timestamps.EXACT,
                Map.of(5L, Map.of("job", "42")))));
        JsonNode run = select(trace, "X", "G5").getFirst();
        assertThat(run.get("args").get("labels").get("job").asString()).isEqualTo("42");
        assertThat(select(trace, "i", "create G5").getFirst().get("args").get("labels").get("job").asString()).isEqualTo("42");
        assertThat(select(trace, "X", "G6").getFirst().get("args").has("labels")).isFalse();
    }

    @Test
    void runSlicesPerPTrackWithTheirEnding() {
        JsonNode trace = roundTrip(List.of(
                ev(1_000, 0, 5, Trace.Kind.GO_START, 0),
                ev(4_000, 0, 5, Trace.Kind.GO_PARK, 3),
                ev(2_000, 1, 6, Trace.Kind.GO_START, 0),
                ev(9_500, 1, 6, Trace.Kind.GO_PREEMPT, 1),
                ev(10_000, 0, 7, Trace.Kind.GO_START, 0),
                ev(12_000, 0, 7, Trace.Kind.GO_END, 0)));

        List<JsonNode> slices = select(trace, "X", "G");
        assertThat(slices).hasSize(3);
        JsonNode g5 = slices.stream().filter(s -> s.get("name").asString().equals("G5")).findFirst().orElseThrow();
        assertThat(g5.get("tid").asInt()).isEqualTo(0);
        assertThat(g5.get("ts").asDouble()).isEqualTo(1.0);
        assertThat(g5.get("dur").asDouble()).isEqualTo(3.0);
        assertThat(g5.get("args").get("end").asString()).isEqualTo("park");
        JsonNode g6 = slices.stream().filter(s -> s.get("name").asString().equals("G6")).findFirst().orElseThrow();
        assertThat(g6.get("tid").asInt()).isEqualTo(1);
        assertThat(g6.get("args").get("end").asString()).isEqualTo("preempt (handoff)");

        List<String> tracks = select(trace, "M", "thread_name").stream().map(m -> m.get("args").get("name").asString()).toList();
        assertThat(tracks).contains("P0", "P1", "syscalls");
        assertThat(trace.get("displayTimeUnit").asString()).isEqualTo("ns");
    }

    @Test
    void stealsSyscallsAndUnparksAreVisible() {
        JsonNode trace = roundTrip(List.of(
                ev(100, 1, 9, Trace.Kind.STEAL, (2L << 32) | 4),
                ev(200, 0, 8, Trace.Kind.GO_START, 0),
                ev(300, 0, 8, Trace.Kind.GO_SYSCALL, 0),
                ev(900, 0, 8, Trace.Kind.GO_SYSEXIT, 1),
                ev(950, -1, 11, Trace.Kind.GO_UNPARK, -1),
                ev(960, 2, -1, Trace.Kind.PROC_HANDOFF, 0)));

        JsonNode steal = select(trace, "i", "steal").getFirst();
        assertThat(steal.get("name").asString()).isEqualTo("steal from P2");
        assertThat(steal.get("args").get("goroutines").asInt()).isEqualTo(4);
        assertThat(steal.get("tid").asInt()).isEqualTo(1);

        JsonNode syscall = select(trace, "X", "syscall").getFirst();
        assertThat(syscall.get("tid").asInt()).isEqualTo(ChromeTrace.SYSCALL_TID);
        assertThat(syscall.get("dur").asDouble()).isEqualTo(0.6);
        assertThat(syscall.get("args").get("pRetaken").asBoolean()).isTrue();

        assertThat(select(trace, "i", "unpark G11").getFirst().get("tid").asInt()).isEqualTo(ChromeTrace.NO_P_TID);
        assertThat(select(trace, "i", "handoff P2").getFirst().get("args").get("reason").asString()).isEqualTo("syscall");
    }

    @Test
    void aRunOpenAtStopIsClosedAtTheLastEvent() {
        Map<String, Object> trace = ChromeTrace.of(List.of(
                ev(0, 0, 1, Trace.Kind.GO_START, 0),
                ev(5_000, 1, 2, Trace.Kind.GO_CREATE, 1)));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> events = (List<Map<String, Object>>) trace.get("traceEvents");
        Map<String, Object> open = events.stream().filter(e -> "X".equals(e.get("ph"))).findFirst().orElseThrow();
        assertThat(open.get("dur")).isEqualTo(5.0);
        assertThat(((Map<?, ?>) open.get("args")).get("end")).isEqualTo("recording stopped");
    }

    @Test
    void aSyscallExitThatGotAPResumesTheRunAndHandoffsNameTheirReason() {
        JsonNode trace = roundTrip(List.of(
                ev(100, 0, 8, Trace.Kind.GO_START, 0),
                ev(200, 0, 8, Trace.Kind.GO_SYSCALL, 0),
                ev(250, 0, -1, Trace.Kind.PROC_HANDOFF, 0),
                ev(400, 1, 8, Trace.Kind.GO_SYSEXIT, 1),
                ev(700, 1, 8, Trace.Kind.GO_PARK, 2),
                ev(800, 2, -1, Trace.Kind.PROC_HANDOFF, 1)));

        List<JsonNode> runs = select(trace, "X", "G8");
        assertThat(runs).hasSize(2);
        JsonNode resumed = runs.stream().filter(r -> r.get("tid").asInt() == 1).findFirst().orElseThrow();
        assertThat(resumed.get("ts").asDouble()).isEqualTo(0.4);
        assertThat(resumed.get("dur").asDouble()).isEqualTo(0.3);
        assertThat(resumed.get("args").get("end").asString()).isEqualTo("park");

        List<JsonNode> handoffs = select(trace, "i", "handoff");
        assertThat(handoffs).extracting(h -> h.get("args").get("reason").asString())
                .containsExactly("syscall", "hog (spare P lent)");
        assertThat(handoffs.get(1).get("tid").asInt()).isEqualTo(2);
    }

    @Test
    void droppedEventsAndTheTimestampsModeAreReported() {
        JsonNode trace = json(ChromeTrace.of(List.of(ev(0, 0, 1, Trace.Kind.GO_START, 0)), 17, Trace.Timestamps.INTERPOLATED));
        assertThat(trace.get("otherData").get("dropped").asLong()).isEqualTo(17);
        assertThat(trace.get("otherData").get("events").asLong()).isEqualTo(1);
        assertThat(trace.get("otherData").get("timestamps").asString()).isEqualTo("interpolated");
    }

    @Test
    void interpolatedInstantsSaySoAndClockedOnesDoNot() {
        JsonNode trace = roundTrip(List.of(
                ev(100, 0, 1, Trace.Kind.GO_START, 0),
                new TraceEvent(200, 0, 2, Trace.Kind.GO_CREATE, 1, true),
                new TraceEvent(300, 0, 3, Trace.Kind.GO_UNPARK, 1, true),
                ev(400, 0, 4, Trace.Kind.GO_CREATE, 1),
                ev(500, 0, 1, Trace.Kind.GO_PARK, 3)));
        assertThat(select(trace, "i", "create G2").getFirst().get("args").get("time").asString()).isEqualTo("interpolated");
        assertThat(select(trace, "i", "unpark G3").getFirst().get("args").get("time").asString()).isEqualTo("interpolated");
        assertThat(select(trace, "i", "create G4").getFirst().get("args").has("time")).isFalse();
        assertThat(select(trace, "i", "unpark G3").getFirst().get("args").get("by").asLong()).isEqualTo(1);
    }

    private static JsonNode json(Map<String, Object> trace) {
        JsonMapper json = JsonMapper.builder().build();
        return json.readTree(json.writeValueAsString(trace));
    }
}
