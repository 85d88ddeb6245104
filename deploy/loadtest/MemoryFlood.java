import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Floods a running gosched service with what issue 17 found fatal: named channels filled with
 * 60 KB values from many connections, and jobs with large bodies, until the service refuses.
 * Then it checks that the service held: every refusal a 429 problem, the service healthy, every
 * value it accepted still receivable, every job it accepted still there. Loopback only.
 *
 * <pre>
 * java deploy/loadtest/MemoryFlood.java [base-url]        (default http://127.0.0.1:8080)
 * </pre>
 * Settings (environment): THREADS (32) connections sending at once; CHANNELS (16) of CAPACITY
 * (100000); VALUE_KB (60) per value; MAX_VALUES (300000) in all; JOB_KB (48) of literal per job
 * body; MAX_JOBS (20000); SPAWNERS (8) jobs that each park SPAWN (5000) goroutines until cancelled;
 * FINISHED (200) jobs that finish holding a VALUE_KB result before the flood (the budget evicts
 * them under pressure); GOSCHED_TOKEN (bearer token, if the service has one).
 *
 * <p>Prints a report and one line {@code RESULT name=memory-flood ...}; exits 1 when a check
 * failed (a value or job lost, an answer other than 2xx/429, the service unhealthy, or no
 * refusal at all when EXPECT_REFUSALS=1, the default), 2 on bad usage.
 *
 * <p>Needs only a JDK 25 (single-file source launch); no JSON library: the few members it reads
 * are picked out of the answers by a small scan.
 */
public class MemoryFlood {

    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    static String base;
    static String token;

    /** Problems seen, by "status type budget". */
    static final Map<String, AtomicInteger> refusals = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> unexpected = new ConcurrentHashMap<>();
    static final List<String> failures = Collections.synchronizedList(new ArrayList<>());

    public static void main(String[] args) {
        try {
            flood(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.out.println("FAILED the flood itself: " + t);
            System.exit(1);
        }
        System.exit(failures.isEmpty() ? 0 : 1); // the pool's threads must not keep the JVM alive
    }

    static void flood(String[] args) throws Exception {
        base = args.length > 0 ? args[0] : "http://127.0.0.1:8080";
        if (!base.matches("http://(127\\.[0-9.]+|localhost|\\[::1\\])(:[0-9]+)?/?")) {
            System.err.println("refusing to load-test " + base + ": loopback only");
            System.exit(2);
        }
        base = base.replaceAll("/$", "");
        token = System.getenv("GOSCHED_TOKEN");
        int threads = env("THREADS", 32);
        int channels = env("CHANNELS", 16);
        int capacity = env("CAPACITY", 100_000);
        int valueKb = env("VALUE_KB", 60);
        int maxValues = env("MAX_VALUES", 300_000);
        int jobKb = env("JOB_KB", 48);
        int maxJobs = env("MAX_JOBS", 20_000);
        int spawners = env("SPAWNERS", 8);
        int spawn = env("SPAWN", 5000);
        int finished = env("FINISHED", 200);
        boolean expectRefusals = env("EXPECT_REFUSALS", 1) == 1;
        String run = Long.toString(ProcessHandle.current().pid(), 36) + Long.toString(System.nanoTime() % 1_000_000, 36);

        Response health = get("/actuator/health");
        if (health.status != 200) {
            System.err.println("no healthy gosched service at " + base + ": " + health);
            System.exit(1);
        }
        System.out.printf("memory flood of %s: %d threads, %d channels of %d slots, %d KB values, %d KB job bodies%n",
                base, threads, channels, capacity, valueKb, jobKb);
        System.out.println("limits before: " + get("/api/v1/limits").body);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long t0 = System.nanoTime();

        // 1. Finished jobs that hold a large result: what the budget may evict under pressure.
        String results = "flood-" + run + "-results";
        expect(post("/api/v1/channels", "{\"name\":\"" + results + "\",\"capacity\":" + Math.max(1, finished) + "}"), 201, "create " + results);
        String pad = "x".repeat(valueKb * 1000 - 40);
        List<String> finishedIds = Collections.synchronizedList(new ArrayList<>());
        parallel(pool, finished, i -> {
            Response s = post("/api/v1/channels/" + results + "/send", "{\"value\":\"result-" + i + "|" + pad + "\",\"timeoutMs\":5000}");
            if (s.status != 200) {
                classify(s, "result send");
                return;
            }
            Response j = post("/api/v1/jobs", "{\"name\":\"flood-result\",\"workload\":{\"steps\":[{\"op\":\"recv\",\"channel\":\"" + results + "\"}]}}");
            if (j.status == 202) {
                finishedIds.add(member(j.body, "id"));
            } else {
                classify(j, "result job");
            }
        });
        System.out.printf("1. %d jobs finished with a %d KB result each%n", finishedIds.size(), valueKb);

        // 2. Channels and jobs flooded at once, until both are refused: one budget holds both.
        List<String> names = new ArrayList<>();
        for (int c = 0; c < channels; c++) {
            String name = "flood-" + run + "-" + c;
            expect(post("/api/v1/channels", "{\"name\":\"" + name + "\",\"capacity\":" + capacity + "}"), 201, "create " + name);
            names.add(name);
        }
        Map<String, Set<String>> accepted = new ConcurrentHashMap<>();
        names.forEach(n -> accepted.put(n, ConcurrentHashMap.newKeySet()));
        Map<String, AtomicInteger> refusedInARow = new ConcurrentHashMap<>();
        names.forEach(n -> refusedInARow.put(n, new AtomicInteger()));
        AtomicLong sent = new AtomicLong();
        AtomicLong valuesRefused = new AtomicLong();
        AtomicInteger next = new AtomicInteger();
        Step sendOne = () -> {
            List<String> open = names.stream().filter(n -> refusedInARow.get(n).get() < 3).toList();
            if (open.isEmpty() || sent.get() >= maxValues) {
                return false;
            }
            String ch = open.get(Math.floorMod(next.getAndIncrement(), open.size()));
            String id = ch + "#" + sent.incrementAndGet();
            Response r = post("/api/v1/channels/" + ch + "/send", "{\"value\":\"" + id + "|" + pad + "\",\"timeoutMs\":1000}");
            if (r.status == 200 && "true".equals(member(r.body, "sent"))) {
                accepted.get(ch).add(id);
                refusedInARow.get(ch).set(0);
            } else {
                if (r.status == 429) {
                    valuesRefused.incrementAndGet();
                }
                refusedInARow.get(ch).incrementAndGet();
                classify(r, "send");
            }
            return true;
        };
        String notBefore = Instant.now().plusSeconds(600).toString();
        String literal = "j".repeat(jobKb * 1000);
        List<String> jobIds = Collections.synchronizedList(new ArrayList<>());
        List<String> spawnerIds = Collections.synchronizedList(new ArrayList<>());
        // A spawner ends at its timeout (the API's longest, 5 min); a flood slower than that (a loaded
        // machine) then finds it finished, and the budget may have evicted it under pressure, as it may
        // any finished job: that is not a lost job.
        long spawnersEnd = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        parallel(pool, spawners, i -> {
            // Its goroutines wait on a channel nobody sends to: they hold their stacks until cancelled (or 5 min pass).
            Response r = post("/api/v1/jobs", "{\"name\":\"flood-spawner\",\"timeoutMs\":300000,\"workload\":{\"channels\":"
                    + "[{\"name\":\"never\",\"capacity\":0}],\"steps\":[{\"op\":\"spawn\",\"count\":" + spawn
                    + ",\"steps\":[{\"op\":\"recv\",\"channel\":\"never\"}]},{\"op\":\"wait\"}]}}");
            if (r.status == 202) {
                spawnerIds.add(member(r.body, "id"));
            } else {
                classify(r, "spawner");
            }
        });
        int jobWorkers = Math.max(1, threads / 2);
        AtomicInteger jobsRefusedInARow = new AtomicInteger();
        AtomicLong jobsRefused = new AtomicLong();
        AtomicLong submitted = new AtomicLong();
        Step submitOne = () -> {
            if (jobsRefusedInARow.get() >= 3 * jobWorkers || submitted.incrementAndGet() > maxJobs) {
                return false;
            }
            Response r = post("/api/v1/jobs", "{\"name\":\"flood-delayed\",\"notBefore\":\"" + notBefore + "\",\"workload\":{\"channels\":"
                    + "[{\"name\":\"own\",\"capacity\":1}],\"steps\":[{\"op\":\"send\",\"channel\":\"own\",\"value\":\"" + literal + "\"}]}}");
            if (r.status == 202) {
                jobIds.add(member(r.body, "id"));
                jobsRefusedInARow.set(0);
            } else {
                jobsRefusedInARow.incrementAndGet();
                if (r.status == 429) {
                    jobsRefused.incrementAndGet();
                }
                classify(r, "submit");
            }
            return true;
        };
        // Workers 0..jobWorkers-1 submit jobs, the others send values; each kind stops on its own.
        parallel(pool, threads, w -> {
            Step step = w < jobWorkers && maxJobs > 0 ? submitOne : sendOne;
            while (step.next()) {
                // until this kind is refused for good
            }
        });
        long valuesAccepted = accepted.values().stream().mapToLong(Set::size).sum();
        System.out.printf("2. channels: %d values accepted (%.0f MB of JSON), %d refused%n", valuesAccepted,
                valuesAccepted * valueKb / 1000.0, valuesRefused.get());
        System.out.printf("3. jobs: %d delayed jobs of %d KB and %d spawners accepted, %d refused, %.1f s%n", jobIds.size(), jobKb,
                spawnerIds.size(), jobsRefused.get(), (System.nanoTime() - t0) / 1e9);

        // 4. The service held.
        Response h = get("/actuator/health");
        String status = h.status == 200 ? member(h.body, "status") : "HTTP " + h.status;
        if (!"UP".equals(status)) {
            failures.add("health after the flood: " + h);
        }
        String limits = get("/api/v1/limits").body;
        System.out.println("4. health " + status + "; limits at the peak: " + limits);
        double pressure = metric("gosched_jobs_evicted_total", "reason=\"pressure\"");

        // 5. Everything accepted is still there: every value receivable, every job readable.
        AtomicLong received = new AtomicLong();
        AtomicLong lost = new AtomicLong();
        AtomicLong extra = new AtomicLong();
        parallel(pool, names.size(), c -> {
            String ch = names.get(c);
            Set<String> got = new HashSet<>();
            while (true) {
                Response r = post("/api/v1/channels/" + ch + "/recv", "{\"timeoutMs\":0}");
                if (r.status != 200) {
                    classify(r, "recv");
                    failures.add("recv from " + ch + ": " + r);
                    break;
                }
                if (!"true".equals(member(r.body, "received"))) {
                    break;
                }
                String v = member(r.body, "value");
                got.add(v.substring(0, v.indexOf('|')));
            }
            Set<String> want = accepted.get(ch);
            long missing = want.stream().filter(id -> !got.contains(id)).count();
            long unknown = got.stream().filter(id -> !want.contains(id)).count();
            received.addAndGet(got.size());
            lost.addAndGet(missing);
            extra.addAndGet(unknown);
            if (missing > 0 || unknown > 0) {
                failures.add(ch + ": " + missing + " accepted values missing, " + unknown + " unknown values");
            }
        });
        AtomicLong jobsMissing = new AtomicLong();
        AtomicLong spawnersTimedOut = new AtomicLong();
        boolean spawnersMayHaveEnded = System.nanoTime() > spawnersEnd;
        Set<String> spawnerSet = Set.copyOf(spawnerIds);
        List<String> all = new ArrayList<>(jobIds);
        all.addAll(spawnerIds);
        parallel(pool, all.size(), i -> { // all read first: cancelling makes finished jobs, which retention may then drop
            String id = all.get(i);
            Response g = get("/api/v1/jobs/" + id);
            if (g.status == 404 && spawnersMayHaveEnded && spawnerSet.contains(id)) {
                spawnersTimedOut.incrementAndGet();
            } else if (g.status != 200) {
                jobsMissing.incrementAndGet();
                failures.add("job " + id + ": " + g);
            }
        });
        parallel(pool, all.size(), i -> {
            Response d = request("DELETE", "/api/v1/jobs/" + all.get(i), null);
            if (d.status != 200 && d.status != 202 && d.status != 409 && d.status != 404) { // 409, 404: it already finished
                classify(d, "cancel");
            }
        });
        System.out.printf("5. received %d of %d accepted values (%d lost, %d unknown); %d of %d accepted jobs readable"
                        + " (%d spawners finished at their 5 min timeout and were evicted, as finished jobs may be)%n",
                received.get(), valuesAccepted, lost.get(), extra.get(), all.size() - jobsMissing.get() - spawnersTimedOut.get(),
                all.size(), spawnersTimedOut.get());

        for (String n : names) {
            request("DELETE", "/api/v1/channels/" + n, null);
        }
        request("DELETE", "/api/v1/channels/" + results, null);
        pool.shutdown();
        System.out.println("limits after: " + get("/api/v1/limits").body);
        long refusedTotal = refusals.values().stream().mapToLong(AtomicInteger::get).sum();
        if (expectRefusals && refusedTotal == 0) {
            failures.add("the service refused nothing: the flood did not reach a limit (raise MAX_VALUES or MAX_JOBS)");
        }
        if (!unexpected.isEmpty()) {
            failures.add("answers other than 2xx and 429: " + new TreeMap<>(unexpected));
        }
        System.out.println("refusals: " + new TreeMap<>(refusals));
        System.out.printf("RESULT name=memory-flood values_accepted=%d values_refused=%d values_received=%d values_lost=%d "
                        + "jobs_accepted=%d jobs_refused=%d jobs_missing=%d refusals=%d unexpected=%d evicted_under_pressure=%.0f "
                        + "health=%s seconds=%.1f%n",
                valuesAccepted, valuesRefused.get(), received.get(), lost.get() + extra.get(), all.size(), jobsRefused.get(),
                jobsMissing.get(), refusedTotal, unexpected.values().stream().mapToLong(AtomicInteger::get).sum(), pressure, status,
                (System.nanoTime() - t0) / 1e9);
        failures.stream().limit(20).forEach(f -> System.out.println("FAILED " + f));
    }

    /** A refusal is a 429 problem naming its type (and budget, when a budget refused); anything else is unexpected. */
    static void classify(Response r, String what) {
        if (r.status == 429) {
            String budget = member(r.body, "budget");
            String key = member(r.body, "type") + (budget == null ? "" : " " + budget);
            refusals.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            if (r.retryAfter == null) {
                failures.add(what + ": a 429 without Retry-After: " + r.body);
            }
        } else {
            unexpected.computeIfAbsent(what + " " + (r.status < 0 ? "connection failed" : r.status), k -> new AtomicInteger())
                    .incrementAndGet();
            if (unexpected.size() < 5) {
                System.out.println("unexpected answer to " + what + ": " + r);
            }
        }
    }

    record Response(int status, String body, String retryAfter) {
        @Override
        public String toString() {
            return status + " " + (body.length() > 300 ? body.substring(0, 300) + "..." : body);
        }
    }

    static Response get(String path) {
        return request("GET", path, null);
    }

    static Response post(String path, String json) {
        return request("POST", path, json);
    }

    static Response request(String method, String path, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null && !token.isEmpty()) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body(), r.headers().firstValue("Retry-After").orElse(null));
        } catch (IOException e) {
            return new Response(-1, e.toString(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Response(-1, e.toString(), null);
        }
    }

    static void expect(Response r, int status, String what) {
        if (r.status != status) {
            System.err.println(what + ": expected " + status + ", got " + r);
            System.exit(1);
        }
    }

    /**
     * The first member {@code name} of a JSON text: a string's content (escapes dropped), or a
     * literal's text; null if absent. A scan, not a regular expression: values are 60 KB long.
     */
    static String member(String json, String name) {
        String key = "\"" + name + "\"";
        for (int i = json.indexOf(key); i >= 0; i = json.indexOf(key, i + 1)) {
            int j = skipSpace(json, i + key.length());
            if (j >= json.length() || json.charAt(j) != ':') {
                continue;
            }
            j = skipSpace(json, j + 1);
            if (j < json.length() && json.charAt(j) == '"') {
                StringBuilder sb = new StringBuilder();
                for (j++; j < json.length() && json.charAt(j) != '"'; j++) {
                    if (json.charAt(j) == '\\') {
                        j++;
                    }
                    sb.append(json.charAt(j));
                }
                return sb.toString();
            }
            int k = j;
            while (k < json.length() && ",}] \n\r\t".indexOf(json.charAt(k)) < 0) {
                k++;
            }
            return json.substring(j, k);
        }
        return null;
    }

    static int skipSpace(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    /** A sample's value from /actuator/prometheus (summed over series that contain {@code labels}); 0 if none. */
    static double metric(String name, String labels) {
        double sum = 0;
        for (String line : get("/actuator/prometheus").body.split("\n")) {
            if (line.startsWith(name + "{") && line.contains(labels)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    interface Task {
        void run(int i) throws Exception;
    }

    interface Step {
        boolean next() throws Exception;
    }

    /** Runs {@code task(0..n-1)} on the pool and waits for all. */
    static void parallel(ExecutorService pool, int n, Task task) throws Exception {
        List<Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            fs.add(pool.submit(() -> {
                task.run(k);
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
    }

    static int env(String name, int dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : Integer.parseInt(v.strip());
    }
}
