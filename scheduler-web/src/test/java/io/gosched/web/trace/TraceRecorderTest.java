package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.Trace;
import io.gosched.web.telemetry.TelemetryProperties;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import reactor.test.StepVerifier;

/** The recorder without a server: shutdown ends a recording early and never leaves one running. */
class TraceRecorderTest {

    private static TraceRecorder recorder() {
        return new TraceRecorder(new TelemetryProperties(Duration.ZERO,
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
                        assertThat(Trace.isRecording()).isTrue();
                        recorder.onApplicationEvent(new ContextClosedEvent(ctx));
                        assertThat(Trace.isRecording()).isFalse();
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
        assertThat(Trace.isRecording()).isFalse();
    }

    @Test
    void busyWhileAnotherRecordingRuns() {
        Trace.Recording other = Trace.start(16);
        try {
            StepVerifier.create(recorder().record(Duration.ofSeconds(1)))
                    .expectError(TraceRecorder.Busy.class)
                    .verify(Duration.ofSeconds(5));
        } finally {
            other.stop();
        }
    }
}
