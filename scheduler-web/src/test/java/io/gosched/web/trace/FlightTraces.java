package io.gosched.web.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.gosched.runtime.Go;
import io.gosched.runtime.GoRuntime;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;

/** What the flight-recorder tests share: goroutines to look for, and the goroutines a trace file shows running. */
final class FlightTraces {

    private FlightTraces() {
    }

    /** Runs n goroutines on runtime that each yield once; returns their goids once all ended. */
    static Set<Long> spawnYielding(GoRuntime runtime, int n) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(n);
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        runtime.go(() -> {
            for (int i = 0; i < n; i++) {
                Go.go(() -> {
                    ids.add(Go.goid());
                    Go.yield();
                    done.countDown();
                });
            }
        });
        assertThat(done.await(30, TimeUnit.SECONDS)).as("%d goroutines ended", n).isTrue();
        return ids;
    }

    /** The goids of the run slices ({@code ph: X}, named {@code G<goid>}) of a Chrome trace-event file. */
    static Set<Long> goroutineRuns(JsonNode trace) {
        return trace.get("traceEvents").valueStream()
                .filter(e -> e.path("ph").asString().equals("X") && e.path("name").asString().matches("G\\d+"))
                .map(e -> Long.parseLong(e.path("name").asString().substring(1)))
                .collect(Collectors.toSet());
    }
}
