package io.gosched.service.job;

import io.gosched.service.testing.TestChannels;

import io.gosched.service.job.JobService;

import io.gosched.service.error.RefusedException;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.gosched.service.metrics.ServiceMetrics;
import io.gosched.service.ServiceProperties;
import io.gosched.service.budget.ServiceBudget;
import io.gosched.service.testing.TestProperties;
import io.gosched.runtime.GoRuntime;
import io.gosched.runtime.SchedulerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The embedded job service's cost, measured through {@link JobService} as the controller calls
 * it: heap per queued job, and submissions/s and completions/s of short jobs. Not a test; a main
 * to run before and after a change of the engine, in one JVM setting:
 *
 * <pre>
 *   ./mvnw -o -B -ntp -q test-compile -pl scheduler-api -am
 *   ./mvnw -o -B -ntp -q dependency:build-classpath -pl scheduler-api -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 *   java -Xmx2g -XX:+UseParallelGC --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -XX:+UnlockDiagnosticVMOptions \
 *        -XX:DisableIntrinsic=_currentThread -cp scheduler-api/target/test-classes:scheduler-api/target/classes:$(cat /tmp/cp.txt) \
 *        io.gosched.service.job.EmbeddedJobsHarness
 * </pre>
 * The machine is shared: compare the figures of two builds run back to back, not with absolutes.
 */
public final class EmbeddedJobsHarness {

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String SMALL = "{'workload':{'steps':[{'op':'yield'}]}}";
    static final String STEPS = "{'name':'etl','priority':4,'workload':{'channels':[{'name':'c','capacity':4}],'steps':["
            + "{'op':'spawn','count':4,'steps':[{'op':'send','channel':'c','value':{'n':1,'s':'abcdefgh'}}]},"
            + "{'op':'loop','times':4,'steps':[{'op':'recv','channel':'c'}]},{'op':'sleep','ms':1},{'op':'yield'}]}}";

    private EmbeddedJobsHarness() {}

    public static void main(String[] args) throws Exception {
        int queued = Integer.getInteger("queued", 50_000);
        int runs = Integer.getInteger("runs", 100_000);
        int rounds = Integer.getInteger("rounds", 5);
        // -Djobs=one-step,eight-step and -Dmeasure=heap,flood,paced pick what runs (default: all)
        List<String> jobs = List.of(System.getProperty("jobs", "one-step,eight-step").split(","));
        List<String> measure = List.of(System.getProperty("measure", "heap,flood,paced").split(","));
        for (String body : List.of(SMALL, STEPS)) {
            String label = body == SMALL ? "one-step" : "eight-step";
            if (!jobs.contains(label)) {
                continue;
            }
            if (measure.contains("heap")) {
                double[] perJob = new double[rounds];
                double[] charged = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    double[] m = bytesPerQueuedJob(json(body), queued);
                    perJob[r] = m[0];
                    charged[r] = m[1];
                }
                System.out.printf("%-10s heap per queued job (bytes), %d jobs: median %.0f  all %s; charged to queued_jobs: %.0f%n", label,
                        queued, median(perJob), Arrays.toString(round(perJob)), median(charged));
            }
            for (int queue : new int[] {runs + 10, 1000}) {
                String how = queue > runs ? "flood" : "paced";
                if (!measure.contains(how)) {
                    continue;
                }
                double[] submits = new double[rounds];
                double[] completes = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    double[] t = throughput(json(body), runs, queue);
                    submits[r] = t[0];
                    completes[r] = t[1];
                }
                System.out.printf("%-10s %s submissions/s, %d jobs: median %.0f  all %s%n", label, how, runs, median(submits),
                        Arrays.toString(round(submits)));
                System.out.printf("%-10s %s completions/s, %d jobs: median %.0f  all %s%n", label, how, runs, median(completes),
                        Arrays.toString(round(completes)));
            }
        }
        System.exit(0);
    }

    /**
     * One throughput round ({@code job}: one-step or eight-step, {@code how}: flood or paced), for a
     * driver that loads two builds in one JVM (a class loader each) and alternates their rounds,
     * so that both see the same noise: {submissions/s, completions/s, CPU microseconds per job}.
     */
    public static double[] measureOnce(String job, String how, int runs) throws Exception {
        return throughput(json(job.equals("one-step") ? SMALL : STEPS), runs, how.equals("flood") ? runs + 10 : 1000);
    }

    static JsonNode json(String s) {
        return JSON.readTree(s.replace('\'', '"'));
    }

    record Service(GoRuntime runtime, JobService jobs, ServiceBudget budget) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            jobs.cancelAll(Duration.ofSeconds(10));
            runtime.shutdown(Duration.ofSeconds(10));
        }
    }

    static Service service(Map<String, String> props) {
        ServiceProperties p = TestProperties.service(props);
        ServiceMetrics metrics = new ServiceMetrics(new SimpleMeterRegistry());
        ServiceBudget budget = ServiceBudget.of(p, metrics);
        GoRuntime runtime = GoRuntime.start(SchedulerConfig.builder().gomaxprocs(2).build());
        JobService jobs = EmbeddedJobs.start(runtime, TestChannels.soleNode(p, metrics, budget), p, metrics, Clock.systemUTC(), budget)
                .jobs();
        return new Service(runtime, jobs, budget);
    }

    /**
     * Heap after GC with {@code n} jobs waiting for their notBefore, less the heap before them, per
     * job; and what the budget charges per waiting job ({@code queued_jobs}), which should not be less.
     */
    static double[] bytesPerQueuedJob(JsonNode template, int n) throws Exception {
        try (Service s = service(Map.of("gosched.api.admission.max-queued-jobs", Integer.toString(n + 10),
                "gosched.api.limits.max-retained-bytes", Long.toString(1L << 30)))) {
            String later = Instant.now().plusSeconds(3600).toString();
            s.jobs().submit(delayed(template, later), null); // warm every path once
            long before = heapAfterGc();
            for (int i = 1; i < n; i++) {
                // a fresh body per job, as the controller makes one per request: what survives the GC is what the engine keeps
                s.jobs().submit(delayed(template, later), null);
            }
            long after = heapAfterGc();
            if (s.jobs().waitingJobs() != n) {
                throw new IllegalStateException("expected " + n + " waiting, got " + s.jobs().waitingJobs());
            }
            double charged = s.budget().memory().held(io.gosched.service.budget.Retained.QUEUED_JOBS) / (double) n;
            return new double[] {(after - before) / (double) (n - 1), charged};
        }
    }

    static JsonNode delayed(JsonNode template, String notBefore) {
        tools.jackson.databind.node.ObjectNode b = (tools.jackson.databind.node.ObjectNode) template.deepCopy();
        b.put("notBefore", notBefore);
        return b;
    }

    static long heapAfterGc() throws InterruptedException {
        var mem = ManagementFactory.getMemoryMXBean();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
            long used = mem.getHeapMemoryUsage().getUsed();
            if (Math.abs(used - last) < 64 * 1024) {
                return used;
            }
            last = used;
        }
        return last;
    }

    /**
     * Submits {@code n} jobs as fast as admission takes them and waits until all finished:
     * {submissions/s, completions/s, CPU microseconds per job}. A "flood" has room for all n in the queue; a "paced" run has
     * {@code queue} places and backs off a millisecond on each 429, as a client honouring
     * Retry-After would (a spinning loop would take a core from the engine).
     */
    static double[] throughput(JsonNode body, int n, int queue) throws Exception {
        try (Service s = service(Map.of("gosched.api.admission.max-queued-jobs", Integer.toString(queue),
                "gosched.api.admission.max-running-jobs", "64", "gosched.api.retention.max-finished-jobs", "10000",
                "gosched.api.limits.max-retained-bytes", Long.toString(1L << 30)))) {
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            int refused = 0;
            for (int i = 0; i < n; ) {
                try {
                    s.jobs().submit(body, null);
                    i++;
                } catch (RefusedException full) {
                    refused++;
                    Thread.sleep(1);
                }
            }
            long t1 = System.nanoTime();
            while (s.jobs().waitingJobs() > 0 || s.jobs().runningJobs() > 0) {
                Thread.sleep(1);
            }
            long t2 = System.nanoTime();
            long cpu = processCpuNanos() - cpu0;
            if (refused < 0) {
                throw new AssertionError();
            }
            return new double[] {n / ((t1 - t0) / 1e9), n / ((t2 - t0) / 1e9), cpu / 1e3 / n};
        }
    }

    /** CPU time of the whole process (every thread, the GC's too): less at the mercy of other load than a rate. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static long[] round(double[] xs) {
        return Arrays.stream(xs).mapToLong(Math::round).toArray();
    }
}
