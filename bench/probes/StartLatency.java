import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Submission-to-start latency at a fixed rate (issue 47: "the latency from submission to start,
 * p50/p99, at half the saturation rate"), for bench/cluster.sh.
 *
 * <p>Open loop: a submission is sent every 1/RATE s whatever the answers (round robin over the
 * nodes' ports), so a slow service meets the same offered load instead of slowing its client
 * down, as a closed loop like wrk would (coordinated omission). Every job's own record then says
 * when it was submitted ({@code submittedAt}, stamped by the node that took it) and when its first
 * attempt started ({@code startedAt}, by the node that ran it; the same clock on one machine).
 * After the window it reads up to SAMPLE records spread evenly over the window, past its first
 * fifth (the rate settling) and among its newest 8,000 jobs (a node keeps 10,000 finished ones),
 * waiting for each to start.
 *
 * <p>Prints one line: {@code RESULT rate=.. offered=.. accepted=.. refused=.. failed=.. late_sends=..
 * sampled=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..}. {@code late_sends} counts submissions
 * sent more than 10 ms after their slot, because this client ran short of time: a run with many
 * of them measured the client, not the service.
 *
 *   java bench/probes/StartLatency.java PORTS RATE SECONDS BODY [SAMPLE]
 *   java bench/probes/StartLatency.java 8080,8081 700 20 '{"workload":{"steps":[{"op":"yield"}]}}' 2000
 */
public class StartLatency {

    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern SUBMITTED = Pattern.compile("\"submittedAt\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern STARTED = Pattern.compile("\"startedAt\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern STATE = Pattern.compile("\"state\"\\s*:\\s*\"([^\"]+)\"");

    public static void main(String[] args) throws Exception {
        String[] ports = args[0].split(",");
        double rate = Double.parseDouble(args[1]);
        double seconds = Double.parseDouble(args[2]);
        String body = args[3];
        int sample = args.length > 4 ? Integer.parseInt(args[4]) : 2000;
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).executor(Executors.newVirtualThreadPerTaskExecutor()).build();

        long offered = Math.round(rate * seconds);
        String[] ids = new String[(int) offered];
        AtomicInteger accepted = new AtomicInteger(), refused = new AtomicInteger(), failed = new AtomicInteger();
        int late = 0;
        // Bounds the answers outstanding so that a service that stops answering cannot make this
        // client pile up requests without end; a send that has to wait for room counts as late.
        Semaphore window = new Semaphore(10_000);
        long periodNanos = (long) (1e9 / rate);
        long start = System.nanoTime();
        for (int i = 0; i < offered; i++) {
            long slot = start + i * periodNanos;
            long wait = slot - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            } else if (-wait > 10_000_000) {
                late++;
            }
            window.acquire();
            int n = i;
            URI uri = URI.create("http://127.0.0.1:" + ports[i % ports.length] + "/api/v1/jobs");
            HttpRequest req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
            client.sendAsync(req, HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
                window.release();
                if (e != null) {
                    failed.incrementAndGet();
                } else if (r.statusCode() == 202) {
                    Matcher m = ID.matcher(r.body());
                    if (m.find()) {
                        ids[n] = m.group(1) + "@" + ports[n % ports.length];
                    }
                    accepted.incrementAndGet();
                } else if (r.statusCode() == 429 || r.statusCode() == 503) {
                    refused.incrementAndGet();
                } else {
                    failed.incrementAndGet();
                }
            });
        }
        window.acquire(10_000); // every answer is in
        window.release(10_000);

        List<String> picked = new ArrayList<>();
        // Past the first fifth (the rate settling), and among the newest 8,000: a node keeps its
        // 10,000 newest finished jobs by default (gosched.api.retention.max-finished-jobs).
        int from = (int) Math.max(offered / 5, offered - 8000);
        int step = Math.max(1, (int) ((offered - from) / sample));
        for (int i = from; i < offered && picked.size() < sample; i += step) {
            if (ids[i] != null) {
                picked.add(ids[i]);
            }
        }
        ConcurrentLinkedQueue<Double> latencies = new ConcurrentLinkedQueue<>();
        AtomicInteger unfinished = new AtomicInteger();
        long readDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Semaphore reads = new Semaphore(32);
        for (String p : picked) {
            reads.acquire();
            Thread.ofVirtual().start(() -> {
                try {
                    read(client, p, readDeadline, latencies, unfinished);
                } finally {
                    reads.release();
                }
            });
        }
        reads.acquire(32);

        double[] ms = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf("RESULT rate=%.0f offered=%d accepted=%d refused=%d failed=%d late_sends=%d sampled=%d unfinished=%d"
                        + " p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f%n",
                rate, offered, accepted.get(), refused.get(), failed.get(), late, ms.length, unfinished.get(),
                pct(ms, 0.50), pct(ms, 0.90), pct(ms, 0.99), ms.length == 0 ? Double.NaN : ms[ms.length - 1]);
    }

    /** Reads one job until its first attempt has started (or the deadline), and records the wait from submission. */
    private static void read(HttpClient client, String idAtPort, long deadline, ConcurrentLinkedQueue<Double> out,
            AtomicInteger unfinished) {
        String[] p = idAtPort.split("@");
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + p[1] + "/api/v1/jobs/" + p[0]))
                .timeout(Duration.ofSeconds(30)).GET().build();
        try {
            while (true) {
                String b = client.send(req, HttpResponse.BodyHandlers.ofString()).body();
                Matcher sub = SUBMITTED.matcher(b), st = STARTED.matcher(b), state = STATE.matcher(b);
                if (sub.find() && st.find()) {
                    Duration d = Duration.between(Instant.parse(sub.group(1)), Instant.parse(st.group(1)));
                    out.add(d.toNanos() / 1e6);
                    return;
                }
                boolean waiting = state.find() && Arrays.asList("queued", "waiting", "delayed").contains(state.group(1));
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
        if (sorted.length == 0) {
            return Double.NaN;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
    }
}
