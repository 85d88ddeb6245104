package io.gosched.web.metrics;

import io.gosched.runtime.ProcStats;
import io.gosched.runtime.SchedStats;
import io.gosched.web.telemetry.SchedStatsSource;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * Binds the scheduler's {@link SchedStats} to Micrometer under names that mirror Go's
 * {@code runtime/metrics} and the Prometheus Go collector, with {@code gosched_} in place of
 * {@code go_} so nobody mistakes the service for a Go process while PromQL ports by renaming the
 * prefix.
 *
 * <table>
 *   <caption>Exposed names (Prometheus form)</caption>
 *   <tr><th>name</th><th>type</th><th>Go twin / meaning</th></tr>
 *   <tr><td>gosched_goroutines</td><td>gauge</td><td>go_goroutines</td></tr>
 *   <tr><td>gosched_goroutines_leaked_total</td><td>counter</td><td>/goroutineleak (Go 1.26 profile count)</td></tr>
 *   <tr><td>gosched_sched_goroutines_{running,runnable,waiting,not_in_go}_goroutines</td><td>gauge</td>
 *       <td>/sched/goroutines/*:goroutines (not-in-go = in a syscall)</td></tr>
 *   <tr><td>gosched_sched_goroutines_created_goroutines_total</td><td>counter</td><td>/sched/goroutines-created:goroutines</td></tr>
 *   <tr><td>gosched_sched_gomaxprocs_threads</td><td>gauge</td><td>/sched/gomaxprocs:threads</td></tr>
 *   <tr><td>gosched_sched_threads_total_threads</td><td>gauge</td><td>/sched/threads/total:threads</td></tr>
 *   <tr><td>gosched_sched_latencies_seconds</td><td>histogram</td><td>/sched/latencies:seconds ({@link SchedLatencyCollector})</td></tr>
 *   <tr><td>gosched_threads{state=running|spinning|idle|syscall}</td><td>gauge</td><td>Ms by state (schedtrace)</td></tr>
 *   <tr><td>gosched_procs{state=running|idle|syscall|gcstop}</td><td>gauge</td><td>Ps by status</td></tr>
 *   <tr><td>gosched_runqueue_global_goroutines, gosched_runqueue_local_goroutines{p}</td><td>gauge</td><td>schedtrace runqueue=… [..]</td></tr>
 *   <tr><td>gosched_p_schedticks_total{p}, gosched_p_syscallticks_total{p}, gosched_p_timers{p}</td><td>counter, gauge</td><td>scheddetail</td></tr>
 *   <tr><td>gosched_schedules_total, gosched_steals_total, gosched_stolen_goroutines_total</td><td>counter</td><td>schedule() calls, runqsteal successes, Gs moved</td></tr>
 *   <tr><td>gosched_preemptions_total{kind=cooperative|handoff}</td><td>counter</td><td>safe-point preemptions; Ps taken from a G that ignored the request</td></tr>
 *   <tr><td>gosched_handoffs_total, gosched_syscall_handoffs_total</td><td>counter</td><td>handoffp (all), retake from syscalls</td></tr>
 *   <tr><td>gosched_timers_fired_total, gosched_netpoll_ready_goroutines_total</td><td>counter</td><td>timers run, Gs readied by netpoll</td></tr>
 *   <tr><td>gosched_uptime_seconds</td><td>gauge</td><td>runtime age</td></tr>
 * </table>
 *
 * <p>Counters are {@link FunctionCounter}s over the runtime's own monotonic totals, so they cost
 * nothing between scrapes. Every meter reads through {@link SchedStatsSource}, so one scrape reads
 * the runtime once. Tags are bounded: {@code state} and {@code kind} by fixed vocabularies,
 * {@code p} by GOMAXPROCS. Per-P meters follow {@code procresize}, so the series set always equals
 * the current Ps: the per-P gauges are Micrometer {@link MultiGauge}s, whose rows are set to the
 * live Ps once a second (a row of a P that went away is removed by Micrometer itself). Micrometer
 * has no multi-counter, so the two per-P counters are {@link FunctionCounter}s kept in step with
 * the same rows by that refresh.
 */
@Component
public class SchedulerMetrics implements MeterBinder, DisposableBean {

    static final Duration RECONCILE_PERIOD = Duration.ofSeconds(1);

    private final SchedStatsSource source;
    private final SchedLatencyCollector latencyCollector;
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
    /** Per registry, its per-P meters. Guarded by {@code this}. */
    private final Map<MeterRegistry, ProcMeters> procMeters = new HashMap<>();
    private final Disposable reconciler;

    /**
     * @param environment read for {@code management.metrics.tags.*}: Micrometer applies those common
     *     tags to its own meters only, and the latency histogram is not a Micrometer meter
     */
    @Autowired
    public SchedulerMetrics(SchedStatsSource source, Environment environment) {
        this(source, Binder.get(environment)
                .bind("management.metrics.tags", Bindable.mapOf(String.class, String.class))
                .orElse(Map.of()));
    }

    SchedulerMetrics(SchedStatsSource source, Map<String, String> commonTags) {
        this.source = source;
        this.latencyCollector = new SchedLatencyCollector(source, new TreeMap<>(commonTags));
        this.reconciler = Schedulers.single().schedulePeriodically(
                this::reconcileProcMeters,
                RECONCILE_PERIOD.toMillis(), RECONCILE_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "gosched.goroutines", null, "Live goroutines (go_goroutines)", s -> s.goroutines());
        gauge(registry, "gosched.sched.goroutines.runnable", "goroutines",
                "Goroutines in a run queue or runnext, not running", s -> s.goroutinesByState().runnable());
        gauge(registry, "gosched.sched.goroutines.waiting", "goroutines",
                "Goroutines parked (channel, timer, sync, netpoll)", s -> s.goroutinesByState().waiting());
        gauge(registry, "gosched.sched.goroutines.not.in.go", "goroutines",
                "Goroutines inside Go.syscall (Go: not-in-go)", s -> s.goroutinesByState().syscall());
        gauge(registry, "gosched.sched.goroutines.running", "goroutines",
                "Goroutines on a P right now", SchedulerMetrics::runningGoroutines);
        counter(registry, "gosched.sched.goroutines.created", "goroutines",
                "Goroutines created since start", s -> s.spawned());
        counter(registry, "gosched.goroutines.leaked", null, "Goroutines found leaked: blocked forever on a channel, "
                + "select or sync object nobody can reach (Go 1.26 goroutineleak)", s -> s.leakedGoroutines());
        gauge(registry, "gosched.sched.gomaxprocs", "threads", "GOMAXPROCS, the number of Ps", s -> s.gomaxprocs());
        gauge(registry, "gosched.sched.threads.total", "threads", "Ms (scheduler threads) alive", s -> s.threads());

        for (String state : List.of("running", "spinning", "idle", "syscall")) {
            Gauge.builder("gosched.threads", source, src -> threadsIn(src.stats(), state))
                    .description("Ms by state: running a G, spinning for work, parked idle, in a syscall")
                    .tag("state", state)
                    .strongReference(true)
                    .register(registry);
        }
        // Every status but DEAD: stats() lists only the Ps in use, so a dead one is never counted.
        for (ProcStats.Status status : List.of(ProcStats.Status.RUNNING, ProcStats.Status.IDLE, ProcStats.Status.SYSCALL,
                ProcStats.Status.GCSTOP)) {
            Gauge.builder("gosched.procs", source, src -> procsIn(src.stats(), status))
                    .description("Ps by status")
                    .tag("state", status.goName())
                    .strongReference(true)
                    .register(registry);
        }
        gauge(registry, "gosched.runqueue.global", "goroutines", "Goroutines in the global run queue",
                s -> s.globalRunqueue());

        counter(registry, "gosched.schedules", null, "Rounds of schedule()", s -> s.schedules());
        counter(registry, "gosched.steals", null, "Successful runqsteal calls", s -> s.steals());
        counter(registry, "gosched.stolen.goroutines", "goroutines", "Goroutines moved by stealing",
                s -> s.stolenGoroutines());
        counterTagged(registry, "gosched.preemptions", "Preemptions by kind: cooperative at a safe point, "
                + "or a hand-off of the P of a G that ignored the request for a second quantum",
                Tags.of("kind", "cooperative"), s -> s.preemptions());
        counterTagged(registry, "gosched.preemptions", "Preemptions by kind: cooperative at a safe point, "
                + "or a hand-off of the P of a G that ignored the request for a second quantum",
                Tags.of("kind", "handoff"), s -> s.handoffsByCause().preempt());
        counter(registry, "gosched.handoffs", null, "handoffp calls (syscall and preemption hand-offs included)",
                s -> s.handoffs());
        counter(registry, "gosched.syscall.handoffs", null, "Ps retaken from Ms blocked in a syscall",
                s -> s.handoffsByCause().syscall());
        counter(registry, "gosched.timers.fired", null, "Timers run", s -> s.timersFired());
        counter(registry, "gosched.netpoll.ready", "goroutines", "Goroutines readied by the netpoller",
                s -> s.netpollReady());
        gauge(registry, "gosched.uptime", "seconds", "Time since the runtime started",
                s -> s.uptimeNanos() / 1e9);

        if (registry instanceof PrometheusMeterRegistry prometheus) {
            latencyCollector.registerOnce(prometheus.getPrometheusRegistry());
        }
        registries.add(registry);
        reconcile(registry, source.stats());
    }

    /** Executed on the reconciler thread every second: follows procresize in every bound registry. */
    void reconcileProcMeters() {
        if (registries.isEmpty()) {
            return;
        }
        SchedStats stats = source.stats();
        for (MeterRegistry registry : registries) {
            reconcile(registry, stats);
        }
    }

    /**
     * The per-P meters of one registry: two gauges as multi-gauges over the live Ps, two counters
     * by P id (Micrometer has no multi-counter).
     */
    private record ProcMeters(MultiGauge runqueue, MultiGauge timers, Map<Integer, List<Meter>> counters) {}

    private synchronized void reconcile(MeterRegistry registry, SchedStats stats) {
        ProcMeters meters = procMeters.computeIfAbsent(registry, r -> new ProcMeters(
                MultiGauge.builder("gosched.runqueue.local")
                        .description("Goroutines in the local run queue of P p (runnext not counted)")
                        .baseUnit("goroutines").register(r),
                MultiGauge.builder("gosched.p.timers").description("Timers in the heap of P p").register(r),
                new HashMap<>()));
        List<MultiGauge.Row<?>> runqueue = new ArrayList<>();
        List<MultiGauge.Row<?>> timers = new ArrayList<>();
        Set<Integer> live = new HashSet<>();
        for (ProcStats proc : stats.procs()) {
            int p = proc.id();
            live.add(p);
            Tags tags = pTag(p);
            runqueue.add(MultiGauge.Row.of(tags, source, src -> procValue(src.stats(), p, ProcStats::runqueue)));
            timers.add(MultiGauge.Row.of(tags, source, src -> procValue(src.stats(), p, ProcStats::timers)));
        }
        // overwrite=false: a row that stays keeps its gauge (it reads its P by id); rows absent now are removed
        meters.runqueue().register(runqueue, false);
        meters.timers().register(timers, false);
        meters.counters().entrySet().removeIf(e -> {
            if (live.contains(e.getKey())) {
                return false;
            }
            e.getValue().forEach(registry::remove);
            return true;
        });
        for (int p : live) {
            meters.counters().computeIfAbsent(p, id -> List.of(
                    FunctionCounter.builder("gosched.p.schedticks", source, src -> procValue(src.stats(), id, ProcStats::schedtick))
                            .description("schedule() rounds on P p (schedtick)").tags(pTag(id)).register(registry),
                    FunctionCounter.builder("gosched.p.syscallticks", source, src -> procValue(src.stats(), id, ProcStats::syscalltick))
                            .description("Syscalls entered on P p (syscalltick)").tags(pTag(id)).register(registry)));
        }
    }

    private static Tags pTag(int p) {
        return Tags.of("p", Integer.toString(p));
    }

    private static double procValue(SchedStats s, int p, ToDoubleFunction<ProcStats> f) {
        for (ProcStats proc : s.procs()) {
            if (proc.id() == p) {
                return f.applyAsDouble(proc);
            }
        }
        return Double.NaN; // P went away between refreshes; the next one removes its meters
    }

    /**
     * Ms that run a G. The core reports spinning, idle and syscall Ms; the rest of {@code threads}
     * run goroutines (sysmon has no M in this count).
     */
    static double threadsIn(SchedStats s, String state) {
        return switch (state) {
            case "spinning" -> s.spinningThreads();
            case "idle" -> s.idleThreads();
            case "syscall" -> s.syscallThreads();
            case "running" -> Math.max(0, s.threads() - s.spinningThreads() - s.idleThreads() - s.syscallThreads());
            default -> throw new IllegalArgumentException(state);
        };
    }

    static double procsIn(SchedStats s, ProcStats.Status status) {
        int n = 0;
        for (ProcStats p : s.procs()) {
            if (p.is(status)) {
                n++;
            }
        }
        return n;
    }

    static double runningGoroutines(SchedStats s) {
        int n = 0;
        for (ProcStats p : s.procs()) {
            if (p.currentGoid() >= 0) {
                n++;
            }
        }
        return n;
    }

    private void gauge(MeterRegistry r, String name, String unit, String help, ToDoubleFunction<SchedStats> f) {
        Gauge.builder(name, source, src -> f.applyAsDouble(src.stats()))
                .description(help).baseUnit(unit).strongReference(true).register(r);
    }

    private void counter(MeterRegistry r, String name, String unit, String help, ToDoubleFunction<SchedStats> f) {
        FunctionCounter.builder(name, source, src -> f.applyAsDouble(src.stats()))
                .description(help).baseUnit(unit).register(r);
    }

    private void counterTagged(MeterRegistry r, String name, String help, Tags tags, ToDoubleFunction<SchedStats> f) {
        FunctionCounter.builder(name, source, src -> f.applyAsDouble(src.stats()))
                .description(help).tags(tags).register(r);
    }

    @Override
    public void destroy() {
        reconciler.dispose();
        latencyCollector.unregister();
    }
}
