package io.gosched.starter;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.gosched.handler.JobContext;
import io.gosched.handler.JobHandler;
import io.gosched.runtime.Chan;
import io.gosched.runtime.Go;
import io.gosched.runtime.Select;
import io.gosched.sync.WaitGroup;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/**
 * A team's application as the starter meets it: its own package (nothing of gosched scanned), its
 * own beans with {@link JobHandler} methods.
 */
@SpringBootApplication
public class StarterTestApp {

    public enum Format { PNG, JPEG }

    public record Size2(@Min(1) @Max(4096) int width, @Min(1) @Max(4096) int height) {}

    public record Resize(@NotBlank String url, @NotNull @Valid Size2 size, Format format,
            @Size(max = 3) List<@NotBlank String> tags, Map<String, Integer> meta) {}

    public record Flaky(@Min(0) int failures, @NotBlank String key) {}

    public record Nap(@Min(0) @Max(10_000) long ms) {}

    /** Two handlers of one bean: a computation and one that fails its first attempts. */
    @Component
    public static class ImageHandlers {

        /** Attempts seen, by key: what the retry test counts. */
        final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

        @JobHandler(value = "resize-image", description = "Scales an image (computes the area, here)")
        public Map<String, Object> resize(JobContext ctx, Resize args) {
            // Goroutines of its own: the handler is one, so the Go API is at hand.
            Chan<Long> area = Chan.make(1);
            WaitGroup wg = new WaitGroup();
            wg.add(1);
            Go.go(() -> {
                area.send((long) args.size().width() * args.size().height());
                wg.done();
            });
            wg.await();
            return Map.of("url", args.url(), "area", area.recv(), "format", String.valueOf(args.format()),
                    "jobId", ctx.jobId(), "attempt", ctx.attempt(), "goroutine", Go.inGoroutine());
        }

        @JobHandler("flaky")
        public String flaky(Flaky args, JobContext ctx) {
            int n = attempts.computeIfAbsent(args.key(), k -> new AtomicInteger()).incrementAndGet();
            if (n <= args.failures()) {
                throw new IllegalStateException("target down (attempt " + ctx.attempt() + ")");
            }
            return "ok after " + n;
        }

        /** Waits for its context to end: what a cancellation or a deadline ends. */
        @JobHandler("wait-for-cancel")
        public String waitForCancel(JobContext ctx) {
            Select.select(Select.recv(ctx.context().done()));
            return "context ended: " + ctx.context().err().getMessage();
        }

        @JobHandler("nothing")
        public void nothing() {
        }
    }

    public record Steps(@NotBlank String key, String message) {}

    /**
     * Waits on its thread (it is marked blocking) until the test lets it report, reports, waits
     * again until the test releases it, then reports once more and returns at once: that last
     * report can only reach the view through the attempt's final write.
     */
    @Component
    public static class ProgressHandlers {

        /** Counted down by the test, by key: hold the handler at known points, before its reports and after. */
        public final Map<String, CountDownLatch> report = new ConcurrentHashMap<>();
        public final Map<String, CountDownLatch> release = new ConcurrentHashMap<>();

        public static CountDownLatch gate(Map<String, CountDownLatch> gates, String key) {
            return gates.computeIfAbsent(key, k -> new CountDownLatch(1));
        }

        @JobHandler(value = "steps", blocking = true)
        public String steps(Steps args, JobContext ctx) throws InterruptedException {
            if (!gate(report, args.key()).await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never let report");
            }
            CountDownLatch gate = gate(release, args.key());
            ctx.progress(0.25, "starting");
            ctx.progress(0.5, args.message()); // the last report before the wait: the one the view must show
            if (!gate.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            ctx.progress("done, 3 of 3 written");
            return "ok";
        }
    }

    /** A blocking handler: plain Thread.sleep, as JDBC or a blocking client would hold the thread. */
    @Component
    public static class BlockingHandlers {

        /** How many naps are inside Thread.sleep now, and the most at once. */
        public final AtomicInteger sleeping = new AtomicInteger();
        public final AtomicInteger mostSleeping = new AtomicInteger();

        @JobHandler(value = "nap", blocking = true, description = "Sleeps on its thread")
        public long nap(Nap args) throws InterruptedException {
            mostSleeping.accumulateAndGet(sleeping.incrementAndGet(), Math::max);
            try {
                Thread.sleep(args.ms());
            } finally {
                sleeping.decrementAndGet();
            }
            return args.ms();
        }
    }
}
