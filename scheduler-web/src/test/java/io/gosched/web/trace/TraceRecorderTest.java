package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.gosched.runtime.Trace;
import io.gosched.web.telemetry.TelemetryProperties;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import reactor.test.StepVerifier;

/**
 * The recorder without a server: shutdown ends a recording early and never leaves one running; it
 * records its own runtime, and only that one.
 */
class TraceRecorderTest {

    private final GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build());

    @AfterEach
    void stopRuntime() {
        runtime.close();
    }

    private TraceRecorder recorder() {
        return recorder(runtime);
    }

    private static TraceRecorder recorder(GoRuntime runtime) {
        return new TraceRecorder(runtime, new TelemetryProperties(Duration.ZERO,
                new TelemetryProperties.Stream(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(10),
                        Duration.ofSeconds(15)),
                new TelemetryProperties.Trace(128)));
    }

    @Test
    void contextCloseEndsTheWaitAndStopsTheRecording() {
        TraceRecorder recorder = recorder();
        try (GenericApplicationContext ctx = new GenericApplicationContext()) {
            StepVerifier.create(recorder.record(Duration.ofSeconds(30)))
                    .then(() -> {
                        assertThat(runtime.trace().isRecording()).isTrue();
                        recorder.onApplicationEvent(new ContextClosedEvent(ctx));
                        assertThat(runtime.trace().isRecording()).isFalse();
                    })
                    .assertNext(trace -> assertThat(trace).containsKeys("traceEvents", "otherData"))
                    .expectComplete()
                    .verify(Duration.ofSeconds(5));
        }
        assertThat(recorder.recording()).isFalse();
        // After close a new request does not wait either.
        StepVerifier.create(recorder.record(Duration.ofSeconds(30)))
                .expectNextMatches(Map.class::isInstance)
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        assertThat(runtime.trace().isRecording()).isFalse();
    }

    @Test
    void busyWhileAnotherRecordingOfTheSameRuntimeRuns() {
        Trace.Recording other = runtime.trace().start(16);
        try {
            StepVerifier.create(recorder().record(Duration.ofSeconds(1)))
                    .expectError(TraceRecorder.Busy.class)
                    .verify(Duration.ofSeconds(5));
        } finally {
            other.stop();
        }
    }

    /** Two services in one JVM (two Spring contexts in a test run, say) each trace their own runtime. */
    @Test
    void aRecordingOfAnotherRuntimeNeitherBlocksNorSeesThisOne() {
        try (GoRuntime other = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(1).build())) {
            Trace.Recording theirs = other.trace().start(1024);
            try {
                StepVerifier.create(recorder().record(Duration.ofMillis(300)))
                        .then(() -> runtime.go(() -> { }))
                        .assertNext(trace -> assertThat(trace.toString()).as("the goroutine this runtime ran").contains("create G"))
                        .expectComplete()
                        .verify(Duration.ofSeconds(5));
                assertThat(other.trace().isRecording()).isTrue();
            } finally {
                assertThat(theirs.stop()).as("the other runtime ran nothing while this one's goroutine ran").isEmpty();
            }
        }
    }
}
