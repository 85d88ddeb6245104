package io.gosched.api.scheduler;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedStats;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Scheduler control: configuration and statistics, and GOMAXPROCS at run time. */
@RestController
@RequestMapping("/api/v1/scheduler")
@Tag(name = "scheduler", description = "The G/M/P runtime")
class SchedulerController {

    record Config(int gomaxprocs, double preemptQuantumMs, long shutdownTimeoutMs) {}

    record Overview(Config config, SchedStats stats) {}

    /** Body of PUT /api/v1/scheduler/gomaxprocs. */
    record SetGomaxprocs(@NotNull @Min(1) @Max(1024) Integer gomaxprocs) {}

    record GomaxprocsChanged(int previous, int gomaxprocs) {}

    private final GoRuntime runtime;

    SchedulerController(GoRuntime runtime) {
        this.runtime = runtime;
    }

    @GetMapping
    @Operation(summary = "Configuration and a SchedStats snapshot")
    Overview get() {
        var c = runtime.config();
        return new Overview(new Config(runtime.gomaxprocs(), c.preemptQuantum().toNanos() / 1e6, c.shutdownTimeout().toMillis()),
                runtime.stats());
    }

    @PutMapping("/gomaxprocs")
    @Operation(summary = "runtime.GOMAXPROCS(n): resize the set of Ps; answers the previous value")
    GomaxprocsChanged gomaxprocs(@Valid @RequestBody SetGomaxprocs body) {
        int previous = runtime.gomaxprocs(body.gomaxprocs());
        return new GomaxprocsChanged(previous, body.gomaxprocs());
    }

    @GetMapping(path = "/schedtrace", produces = MediaType.TEXT_PLAIN_VALUE)
    @Operation(summary = "GODEBUG=schedtrace (detail=true: scheddetail) as text")
    String schedtrace(@RequestParam(defaultValue = "false") boolean detail) {
        return runtime.schedtrace(detail);
    }
}
