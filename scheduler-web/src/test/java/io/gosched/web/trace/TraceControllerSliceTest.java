package io.gosched.web.trace;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.gosched.api.error.ApiExceptionHandler;
import io.gosched.api.error.WireEnums;
import io.gosched.runtime.Trace;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;

/**
 * The web slice of {@code GET /api/v1/trace} with the recorder mocked: the parameters reach it
 * as asked (seconds, the timestamp mode by its wire name), the trace comes back as a named
 * attachment, a recording already running is a 409, and out-of-range input is a 422 that never
 * starts a recording. {@code TraceControllerTest} records real traces over the whole app.
 */
@WebFluxTest(controllers = TraceController.class)
@Import({TraceController.class, ApiExceptionHandler.class, WireEnums.Formatters.class})
class TraceControllerSliceTest {

    @Autowired
    WebTestClient http;

    @MockitoBean
    TraceRecorder recorder;

    @Test
    void theTraceIsAnAttachmentRecordedForTheSecondsAndModeAsked() {
        when(recorder.record(Duration.ofSeconds(3), Trace.Timestamps.EXACT))
                .thenReturn(Mono.just(Map.of("traceEvents", List.of(Map.of("name", "run")))));
        http.get().uri("/api/v1/trace?seconds=3&timestamps=exact").exchange()
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectHeader().valueEquals("Content-Disposition", "attachment; filename=\"gosched-trace.json\"")
                .expectBody().jsonPath("$.traceEvents[0].name").isEqualTo("run");
    }

    @Test
    void theDefaultsAreFiveSecondsInterpolated() {
        when(recorder.record(Duration.ofSeconds(5), Trace.Timestamps.INTERPOLATED)).thenReturn(Mono.just(Map.of("traceEvents", List.of())));
        http.get().uri("/api/v1/trace").exchange().expectStatus().isOk();
        verify(recorder).record(Duration.ofSeconds(5), Trace.Timestamps.INTERPOLATED);
    }

    @Test
    void aRecordingAlreadyRunningIs409() {
        when(recorder.record(any(), any())).thenReturn(Mono.error(new TraceRecorder.Busy()));
        http.get().uri("/api/v1/trace?seconds=1").exchange()
                .expectStatus().isEqualTo(409)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type").isEqualTo("urn:gosched:problem:trace-busy")
                .jsonPath("$.detail").isEqualTo("a trace recording is already running; try again when it has finished");
    }

    @Test
    void outOfRangeInputIs422NamingTheParameterAndRecordsNothing() {
        for (String q : List.of("seconds=0", "seconds=31", "timestamps=wallclock")) {
            String name = q.substring(0, q.indexOf('='));
            http.get().uri("/api/v1/trace?" + q).exchange()
                    .expectStatus().isEqualTo(422)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("urn:gosched:problem:invalid-request")
                    .jsonPath("$.errors[0].pointer").isEqualTo("/" + name);
        }
        verify(recorder, never()).record(any(), any());
    }
}
