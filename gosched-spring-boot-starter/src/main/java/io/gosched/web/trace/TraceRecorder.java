package io.gosched.web.trace;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.Trace;
import io.gosched.web.telemetry.TelemetryProperties;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Runs one recording of the service's runtime ({@link GoRuntime#trace()}) for a fixed time and
 * converts it with {@link ChromeTrace}.
 *
 * <p>A runtime has one recording at a time, so a second request while one runs is refused
 * ({@link Busy}, a 409) rather than queued. Nothing blocks a Reactor thread: the wait is a
 * {@code Mono.delay}; {@code stop()} (which waits ~2 ms for in-flight writers) and the conversion
 * run on {@code boundedElastic}.
 *
 * <p>A recording never outlives its request: it is stopped when the wait ends, when the client
 * goes away (cancel), on error, and on {@link ContextClosedEvent}, which also ends any wait in
 * progress early (the client gets what was recorded so far), so graceful shutdown does not wait up
 * to 30 s for a trace and the next runtime in this JVM never inherits an active recording.
 */
@Component
public class TraceRecorder implements ApplicationListener<ContextClosedEvent> {

    private static final Logger log = LoggerFactory.getLogger(TraceRecorder.class);

    private final Trace trace;
    private final int capacityPerP;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    /** The recording this service started and has not stopped yet; null when none. */
    private final AtomicReference<Trace.Recording> current = new AtomicReference<>();

    public TraceRecorder(GoRuntime runtime, TelemetryProperties properties) {
        this.trace = runtime.trace();
        this.capacityPerP = properties.trace().capacityPerP();
    }

    /** As {@link #record(Duration, Trace.Timestamps)} with interpolated in-run times (the cheap default). */
    public Mono<Map<String, Object>> record(Duration duration) {
        return record(duration, Trace.Timestamps.INTERPOLATED);
    }

    /**
     * Records for {@code duration} (from subscription) and emits the Chrome trace-event object.
     * Errors with {@link Busy} when a recording of the runtime is already active, started by this
     * service or by other code of the process.
     */
    public Mono<Map<String, Object>> record(Duration duration, Trace.Timestamps timestamps) {
        return Mono.defer(() -> {
            Trace.Recording recording;
            try {
                recording = trace.start(capacityPerP, timestamps);
            } catch (IllegalStateException e) {
                return Mono.error(new Busy());
            }
            current.set(recording);
            return Mono.delay(duration).then()
                    .or(closed.asMono())
                    .publishOn(Schedulers.boundedElastic())
                    .then(Mono.fromCallable(() -> export(recording)))
                    .doOnCancel(() -> stopLater(recording, "client went away"))
                    .doOnError(e -> stopLater(recording, "export failed"));
        });
    }

    private Map<String, Object> export(Trace.Recording recording) {
        List<Trace.Event> events = stop(recording);
        return ChromeTrace.of(events.stream().map(TraceEvent::of).toList(), recording.dropped(), recording.timestamps(),
                recording.labels());
    }

    private List<Trace.Event> stop(Trace.Recording recording) {
        current.compareAndSet(recording, null);
        return recording.stop();
    }

    /** Off the calling thread: a cancel arrives on a Netty event loop, and stop() parks briefly. */
    private void stopLater(Trace.Recording recording, String why) {
        log.debug("trace recording stopped early: {}", why);
        Schedulers.boundedElastic().schedule(() -> stop(recording));
    }

    /** Whether this service has a recording running. */
    public boolean recording() {
        return current.get() != null;
    }

    /** Ends every wait (present and future) and stops the active recording before the server drains. */
    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        closed.tryEmitEmpty();
        Trace.Recording r = current.getAndSet(null);
        if (r != null) {
            r.stop();
        }
    }

    /** A recording is already active. */
    public static final class Busy extends RuntimeException {
        Busy() {
            super("a trace recording is already running; try again when it has finished");
        }
    }
}
