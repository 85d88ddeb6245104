import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The peer of HTTP-target jobs in bench/http-target.sh: a plain virtual-thread-per-call runner.
 * N virtual threads each make one blocking call with the JDK's HttpClient (HTTP/1.1, as the
 * service's caller), all at once; reports the wall time, the calls answered 200, the CPU seconds
 * the process used and the most platform threads it had while they ran (/proc/self/status,
 * sampled every 10 ms). A warm-up round of N calls runs first in the same JVM, not reported, as the
 * service it is compared with is warmed up too.
 *
 *   java bench/probes/VtHttpRunner.java URL N
 */
public class VtHttpRunner {
    public static void main(String[] args) throws Exception {
        URI url = URI.create(args[0]);
        int n = Integer.parseInt(args[1]);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(30)).build();
        callAll(client, url, n, new AtomicInteger());
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger(threads());
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        Thread sampler = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                peak.accumulateAndGet(threads(), Math::max);
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        long t0 = System.nanoTime();
        callAll(client, url, n, ok);
        double s = (System.nanoTime() - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        sampler.interrupt();
        System.out.printf("calls=%d ok=%d seconds=%.3f per_s=%.0f cpu_s=%.2f peak_platform_threads=%d%n", n, ok.get(), s, ok.get() / s,
                cpu, peak.get());
    }

    /** N calls at once, one virtual thread each; returns when all have answered or failed. */
    static void callAll(HttpClient client, URI url, int n, AtomicInteger ok) {
        try (var vts = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                String key = "vt-" + i;
                vts.submit(() -> {
                    HttpRequest r = HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(110))
                            .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
                    if (client.send(r, HttpResponse.BodyHandlers.ofByteArray()).statusCode() == 200) {
                        ok.incrementAndGet();
                    }
                    return null;
                });
            }
        }
    }

    /** Platform threads of this process now (virtual threads are not kernel threads). */
    static int threads() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Threads:")) {
                    return Integer.parseInt(line.substring(8).strip());
                }
            }
        } catch (Exception e) {
            return -1;
        }
        return -1;
    }
}
