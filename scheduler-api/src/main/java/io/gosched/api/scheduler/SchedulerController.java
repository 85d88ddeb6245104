package io.gosched.api.scheduler;

import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.LatencyHistogram;
import io.gosched.runtime.ProcStats;
import io.gosched.runtime.SchedStats;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.util.List;

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
@Tag(name = "Scheduler", description = "The G/M/P runtime")
class SchedulerController {

    record Config(int gomaxprocs, double preemptQuantumMs, long shutdownTimeoutMs) {}

    record Overview(Config config, Stats stats) {}

    /**
     * A {@link SchedStats} as this endpoint writes it: flat, one field per figure, in the record's
     * order. The core's record groups its trailing figures ({@link SchedStats.Handoffs}, {@link
     * SchedStats.GoroutineStates}); the JSON is this API's own contract and keeps its shape.
     */
    @Schema(name = "SchedStats")
    record Stats(int gomaxprocs, int idleProcs, int threads, int spinningThreads, int idleThreads,
            int syscallThreads, int globalRunqueue, int[] localRunqueues, long goroutines,
            long spawned, long schedules, long steals, long stolenGoroutines,
            long preemptions, long handoffs, long timersFired, long netpollReady,
            long preemptHandoffs, long syscallHandoffs,
            long runnableGoroutines, long waitingGoroutines, long syscallGoroutines,
            LatencyHistogram schedLatency, List<ProcStats> procs, long uptimeNanos, long leakedGoroutines) {

        static Stats of(SchedStats s) {
            SchedStats.Handoffs h = s.handoffsByCause();
            SchedStats.GoroutineStates g = s.goroutinesByState();
            return new Stats(s.gomaxprocs(), s.idleProcs(), s.threads(), s.spinningThreads(), s.idleThreads(),
                    s.syscallThreads(), s.globalRunqueue(), s.localRunqueues(), s.goroutines(),
                    s.spawned(), s.schedules(), s.steals(), s.stolenGoroutines(),
                    s.preemptions(), s.handoffs(), s.timersFired(), s.netpollReady(),
                    h.preempt(), h.syscall(), g.runnable(), g.waiting(), g.syscall(),
                    s.schedLatency(), s.procs(), s.uptimeNanos(), s.leakedGoroutines());
        }
    }

    /** Body of PUT /api/v1/scheduler/gomaxprocs. */
    record SetGomaxprocs(@NotNull @Min(1) @Max(1024) Integer gomaxprocs) {}

    record GomaxprocsChanged(int previous, int gomaxprocs) {}

    private final GoRuntime runtime;

    SchedulerController(GoRuntime runtime) {
        this.runtime = runtime;
    }

    @GetMapping
    @Operation(operationId = "getScheduler", summary = "Configuration and a SchedStats snapshot")
    Overview get() {
        var c = runtime.config();
        return new Overview(new Config(runtime.gomaxprocs(), c.preemptQuantum().toNanos() / 1e6, c.shutdownTimeout().toMillis()),
                Stats.of(runtime.stats()));
    }

    @PutMapping("/gomaxprocs")
    @Operation(operationId = "setGomaxprocs", summary = "runtime.GOMAXPROCS(n): resize the set of Ps; answers the previous value")
    GomaxprocsChanged gomaxprocs(@Valid @RequestBody SetGomaxprocs body) {
        int previous = runtime.gomaxprocs(body.gomaxprocs());
        return new GomaxprocsChanged(previous, body.gomaxprocs());
    }

    @GetMapping(path = "/schedtrace", produces = MediaType.TEXT_PLAIN_VALUE)
    @Operation(operationId = "getSchedtrace", summary = "GODEBUG=schedtrace (detail=true: scheddetail) as text")
    String schedtrace(@RequestParam(defaultValue = "false") boolean detail) {
        return runtime.schedtrace(detail);
    }
}
