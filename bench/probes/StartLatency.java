import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Submission-to-start latency (issue 47: "the latency from submission to start, p50/p99, at half
 * the saturation rate"), for bench/cluster.sh: reads the records of jobs that wrk submitted at a
 * fixed rate (bench/start-latency.lua, which wrote each accepted job's id and the port that took
 * it to DIR/ids-THREAD.txt) and reports p50/p90/p99/max of {@code startedAt - submittedAt}. Both
 * times are the service's own: stamped by the node that took the job and by the node that ran it
 * (one clock on one machine). Runs after the load, so that its HTTP client costs the measured
 * nodes nothing while they take it.
 *
 * <p>It reads up to SAMPLE jobs spread evenly over each wrk thread's submissions, past the first
 * fifth (the rate settling) and among each thread's newest (a node keeps its 10,000 newest
 * finished jobs by default, gosched.api.retention.max-finished-jobs), waiting for each to start.
 *
 *   java bench/probes/StartLatency.java DIR [SAMPLE]
 *
 * Prints one line: {@code RESULT sampled=.. unfinished=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..}.
 */
public class StartLatency {

    private static final Pattern SUBMITTED = Pattern.compile("\"submittedAt\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern STARTED = Pattern.compile("\"startedAt\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern STATE = Pattern.compile("\"state\"\\s*:\\s*\"([^\"]+)\"");

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int sample = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        List<List<String>> perThread = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("ids-")).sorted().toList()) {
                perThread.add(Files.readAllLines(f).stream().filter(l -> !l.isBlank()).toList());
            }
        }
        int threads = Math.max(1, perThread.size());
        List<String> picked = new ArrayList<>();
        for (List<String> lines : perThread) {
            int from = Math.max(lines.size() / 5, lines.size() - 8000 / threads);
            int want = sample / threads;
            int step = Math.max(1, (lines.size() - from) / Math.max(1, want));
            for (int i = from; i < lines.size() && picked.size() < sample; i += step) {
                picked.add(lines.get(i));
            }
        }

        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
        ConcurrentLinkedQueue<Double> latencies = new ConcurrentLinkedQueue<>();
        AtomicInteger unfinished = new AtomicInteger();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Semaphore reads = new Semaphore(16);
        for (String line : picked) {
            reads.acquire();
            Thread.ofVirtual().start(() -> {
                try {
                    read(client, line.split(" "), deadline, latencies, unfinished);
                } finally {
                    reads.release();
                }
            });
        }
        reads.acquire(16);

        double[] ms = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf("RESULT sampled=%d unfinished=%d p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f%n", ms.length,
                unfinished.get(), pct(ms, 0.50), pct(ms, 0.90), pct(ms, 0.99), ms.length == 0 ? Double.NaN : ms[ms.length - 1]);
    }

    /** Reads one job ({@code [id, port]}) until its first attempt has started (or the deadline), and records the wait from submission. */
    private static void read(HttpClient client, String[] idPort, long deadline, ConcurrentLinkedQueue<Double> out, AtomicInteger unfinished) {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + idPort[1] + "/api/v1/jobs/" + idPort[0]))
                .timeout(Duration.ofSeconds(30)).GET().build();
        try {
            while (true) {
                String b = client.send(req, HttpResponse.BodyHandlers.ofString()).body();
                Matcher sub = SUBMITTED.matcher(b), st = STARTED.matcher(b), state = STATE.matcher(b);
                if (sub.find() && st.find()) {
                    out.add(Duration.between(Instant.parse(sub.group(1)), Instant.parse(st.group(1))).toNanos() / 1e6);
                    return;
                }
                boolean waiting = state.find() && Set.of("queued", "waiting").contains(state.group(1));
                if (!waiting || System.nanoTime() - deadline > 0) {
                    unfinished.incrementAndGet();
                    return;
                }
                Thread.sleep(200);
            }
        } catch (Exception e) {
            unfinished.incrementAndGet();
        }
    }

    private static double pct(double[] sorted, double q) {
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }
}
