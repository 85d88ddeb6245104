package io.gosched.bench.compare;

import io.gosched.bench.Result;
import io.gosched.bench.BenchWorkload;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The peer comparison driver behind {@code bench/compare.sh}: runs every workload on every peer
 * (gosched, JDK virtual threads, Kotlin coroutines, Go) in one invocation and writes one Markdown
 * table.
 *
 * <p>Each peer is a long-lived process ({@link io.gosched.bench.peer.PeerMain}, or the Go binary)
 * started once per parallelism and driven over a line protocol, so rounds can be interleaved:
 * round after round, every workload runs once on every peer, the peer order rotating each round.
 * Slow drifts of the machine's load (others building on the same cores) then spread over all
 * peers instead of landing on one. The first rounds are warm-up (JIT) and are not counted; the
 * table shows the median of the measured rounds. Every run's check value is compared with the
 * workload's expected one; a wrong check, an error or a timeout is reported as a failure, never as
 * a number.
 */
public final class Compare {
    private static final List<String> ALL_PEERS = List.of("gosched", "vt", "kotlin", "go");

    private Compare() {}

    /** Command-line options; see {@link #usage()}. */
    static final class Options {
        List<BenchWorkload> workloads = List.of(BenchWorkload.values());
        List<String> peers = ALL_PEERS;
        int warmup = 2, rounds = 5, procs = 2;
        boolean quick;
        Path out = Path.of("bench/results");
        String jar = "scheduler-bench/target/benchmarks.jar";
        String goBin = "bench/go/bench-go";
        String heap = "3g";
        /** -Xms = -Xmx of the fresh process each parked run gets: 1M parked virtual threads need ~1.2 GB. */
        String parkedHeap = "4g";
        double maxLoad = 1.0;
        /** Seconds to wait for the load to fall to maxLoad before starting; -1: 120, or 0 with --quick. */
        long waitQuietSeconds = -1;
        boolean allowNoisy;
        long timeoutSeconds = 180;
        Path jfrDir;
        String label = "";
        List<String> jvmOpts = new ArrayList<>();
        /** Extra gosched peers by name: another build's jar, and exactly the JVM options given. */
        Map<String, Variant> variants = new LinkedHashMap<>();
        boolean write = true;
    }

    /**
     * A gosched peer from another build (an A/B against main in one run, so that both sides
     * share the machine's load): its own jar and its own JVM options; it gets the options every
     * JVM peer gets, but not SafeJvm's, which are added only where --variant-opt says so.
     */
    static final class Variant {
        final String jar;
        final List<String> jvmOpts = new ArrayList<>();

        Variant(String jar) {
            this.jar = jar;
        }
    }


    static String usage() {
        return """
                usage: compare.sh [options]
                  --workloads a,b,..   of: %s (default: all)
                  --peers a,b,..       of: gosched,vt,kotlin,go (default: all)
                  --rounds N           measured rounds, median shown (default 5)
                  --warmup N           warm-up rounds, not counted (default 2)
                  --quick              small sizes, 1 warm-up, 3 rounds (a smoke run; not for the README)
                  --procs N            GOMAXPROCS / parallelism of every peer (default 2; gosched, pingpong1p, chain1p: 1)
                  --heap SIZE          -Xms and -Xmx of the JVM peers (default 3g)
                  --parked-heap SIZE   -Xms and -Xmx of the fresh JVM of each parked run (default 4g)
                  --max-load L         the machine is quiet when the 1-minute load average is at most L (default 1.0)
                  --wait-quiet S       wait up to S seconds for a quiet machine before starting
                                       (default 120; 0 with --quick)
                  --allow-noisy        run a full comparison on a busy machine anyway; the table is marked
                                       NOISY (without it, such a run is refused; --quick runs are only marked)
                  --timeout S          seconds one run may take before its peer is killed (default 180)
                  --jfr DIR            record JFR (settings=profile) in every JVM peer, files in DIR
                  --jvm-opt OPT        extra JVM option for the JVM peers (repeatable)
                  --variant NAME=JAR   an extra gosched peer NAME run from another build's jar (an A/B
                                       in one run); name it in --peers (repeatable)
                  --variant-opt NAME=OPT  a JVM option of variant NAME only (repeatable; a variant gets
                                       no SafeJvm options unless given here)
                  --no-write           print the table only
                """.formatted(String.join(",", Arrays.stream(BenchWorkload.values()).map(BenchWorkload::id).toList()));
    }

    static Options parse(String[] args) {
        Options o = new Options();
        boolean roundsSet = false, warmupSet = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--workloads" -> o.workloads = Arrays.stream(args[++i].split(",")).map(BenchWorkload::of).toList();
                case "--peers" -> o.peers = List.of(args[++i].split(","));
                case "--variant" -> {
                    String[] kv = args[++i].split("=", 2);
                    if (kv.length != 2 || ALL_PEERS.contains(kv[0])) {
                        throw new IllegalArgumentException("--variant NAME=JAR, NAME not one of " + ALL_PEERS + ": " + args[i]);
                    }
                    o.variants.put(kv[0], new Variant(kv[1]));
                }
                case "--variant-opt" -> {
                    String[] kv = args[++i].split("=", 2);
                    Variant v = kv.length == 2 ? o.variants.get(kv[0]) : null;
                    if (v == null) throw new IllegalArgumentException("--variant-opt NAME=OPT after --variant NAME=JAR: " + args[i]);
                    v.jvmOpts.add(kv[1]);
                }
                case "--rounds" -> { o.rounds = Integer.parseInt(args[++i]); roundsSet = true; }
                case "--warmup" -> { o.warmup = Integer.parseInt(args[++i]); warmupSet = true; }
                case "--quick" -> o.quick = true;
                case "--procs" -> o.procs = Integer.parseInt(args[++i]);
                case "--heap" -> o.heap = args[++i];
                case "--parked-heap" -> o.parkedHeap = args[++i];
                case "--max-load" -> o.maxLoad = Double.parseDouble(args[++i]);
                case "--wait-quiet" -> o.waitQuietSeconds = Long.parseLong(args[++i]);
                case "--allow-noisy" -> o.allowNoisy = true;
                case "--timeout" -> o.timeoutSeconds = Long.parseLong(args[++i]);
                case "--jfr" -> o.jfrDir = Path.of(args[++i]);
                case "--jvm-opt" -> o.jvmOpts.add(args[++i]);
                case "--out" -> o.out = Path.of(args[++i]);
                case "--jar" -> o.jar = args[++i];
                case "--go-bin" -> o.goBin = args[++i];
                case "--label" -> o.label = args[++i];
                case "--no-write" -> o.write = false;
                case "-h", "--help" -> {
                    System.out.print(usage());
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown option " + a + "\n" + usage());
            }
        }
        if (o.quick) {
            if (!roundsSet) o.rounds = 3;
            if (!warmupSet) o.warmup = 1;
        }
        if (o.waitQuietSeconds < 0) o.waitQuietSeconds = o.quick ? 0 : 120;
        if (o.rounds < 1 || o.warmup < 0) throw new IllegalArgumentException("--rounds >= 1, --warmup >= 0");
        for (String p : o.peers) {
            if (!ALL_PEERS.contains(p) && !o.variants.containsKey(p)) throw new IllegalArgumentException("unknown peer " + p);
        }
        return o;
    }

    /** One peer process at one parallelism, driven line by line. */
    static final class PeerProcess implements AutoCloseable {
        private static final String EOF = "\u0000EOF";
        final String peer;
        final int procs;
        final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final String hello;

        PeerProcess(String peer, int procs, Options o) throws IOException, InterruptedException {
            this(peer, procs, o, o.heap, true, "");
        }

        /**
         * preTouch: -XX:+AlwaysPreTouch for a JVM peer (see there). tag: added to the JFR file's
         * name, so a short-lived process does not overwrite the long-lived one's.
         */
        PeerProcess(String peer, int procs, Options o, String heap, boolean preTouch, String tag) throws IOException, InterruptedException {
            this.peer = peer;
            this.procs = procs;
            List<String> cmd = new ArrayList<>();
            ProcessBuilder pb = new ProcessBuilder(cmd);
            if (peer.equals("go")) {
                cmd.add(o.goBin);
                pb.environment().put("GOMAXPROCS", Integer.toString(procs));
            } else {
                cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                // A fixed heap, as a latency-sensitive service would run. The System.gc() before
                // each run (see PeerMain) would otherwise shrink the heap to a few tens of MB,
                // and the next run would pay for regrowing it: on the timers workload, five
                // young collections of 10-30 ms each land in a half-second run and make every
                // sleeper late by them (mean lateness 17-42 ms instead of 4 ms for gosched).
                cmd.add("-Xms" + heap);
                cmd.add("-Xmx" + heap);
                if (preTouch) {
                    // Every page of that heap touched once at start-up, as a latency-sensitive
                    // service would run. Otherwise the first run to allocate into a region G1 had
                    // not used yet pays a page fault per 4 KiB, and on this VM (Firecracker) that
                    // made a 1-P ping-pong run 900 ns a round trip instead of 410 in two runs of
                    // three, whichever runs happened to reach fresh regions: a peer's figure
                    // depended on how much it allocated before, not on what it did. The parked
                    // runs do without it, since their RSS figure counts the pages they touch.
                    cmd.add("-XX:+AlwaysPreTouch");
                }
                // JDK 25's compact object headers, for every JVM peer and variant alike: the JVM
                // option the README recommends for gosched (smaller objects; on the VM of NOTES.md
                // "Compact object headers" channel hand-offs 1.6-2x faster for gosched, no change
                // for virtual threads and Kotlin). --jvm-opt -XX:-UseCompactObjectHeaders undoes it.
                cmd.add("-XX:+UseCompactObjectHeaders");
                cmd.add("--add-exports");
                cmd.add("java.base/jdk.internal.vm=ALL-UNNAMED");
                // Every JVM peer gets the same flags; each uses only its own.
                cmd.add("-Djdk.virtualThreadScheduler.parallelism=" + procs);
                cmd.add("-Dkotlinx.coroutines.scheduler.core.pool.size=" + procs);
                Variant variant = o.variants.get(peer);
                if (variant != null) {
                    cmd.addAll(variant.jvmOpts);
                } else if (peer.equals("gosched")) {
                    // What GoRuntime.start requires (a fresh Thread.currentThread() in goroutine
                    // code). Only for gosched: it makes every currentThread() call a native
                    // call, a cost the other peers do not need to pay.
                    cmd.addAll(io.gosched.runtime.SafeJvm.OPTIONS);
                }
                if (o.jfrDir != null) {
                    cmd.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                            + o.jfrDir.resolve(peer + "-p" + procs + tag + ".jfr").toAbsolutePath());
                }
                cmd.addAll(o.jvmOpts);
                cmd.add("-cp");
                cmd.add(variant != null ? variant.jar : o.jar);
                cmd.add("io.gosched.bench.peer.PeerMain");
                cmd.add(variant != null ? "gosched" : peer);
                cmd.add(Integer.toString(procs));
            }
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            process = pb.start();
            stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread.ofPlatform().daemon().name("read-" + peer + "-" + procs).start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) lines.add(l);
                } catch (IOException ignored) {
                    // The process died; EOF below tells the waiter.
                }
                lines.add(EOF);
            });
            String h = next(60);
            if (h == null || !h.startsWith("HELLO ")) {
                process.destroyForcibly();
                throw new IOException(peer + " did not start: " + h);
            }
            hello = h.substring(6);
        }

        /**
         * The next protocol line, or null after timeoutSeconds or at EOF. Other lines (the JVM's
         * own start-up logging, e.g. JFR's) are passed through to stderr.
         */
        String next(long timeoutSeconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            while (true) {
                long left = deadline - System.nanoTime();
                String l = lines.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
                if (l == null || l.equals(EOF)) return null;
                if (l.startsWith("HELLO ") || l.startsWith("OK ") || l.startsWith("ERR ")) return l;
                System.err.println(peer + ": " + l);
            }
        }

        String call(String command, long timeoutSeconds) throws IOException, InterruptedException {
            stdin.write(command + "\n");
            stdin.flush();
            return next(timeoutSeconds);
        }

        @Override
        public void close() {
            try {
                stdin.write("QUIT\n");
                stdin.flush();
                if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
            } catch (IOException | InterruptedException e) {
                process.destroyForcibly();
            }
        }
    }

    record Key(BenchWorkload workload, String peer) {}

    /** All outcomes of one (workload, peer): results of measured rounds and failure messages. */
    static final class Cell {
        final List<Result> ok = new ArrayList<>();
        /** The measured round of each entry of ok (filled together by {@link #add}). */
        final List<Integer> rounds = new ArrayList<>();
        final List<String> failures = new ArrayList<>();

        void add(int round, Result r) {
            ok.add(r);
            rounds.add(round);
        }

        /** The metric's value in each measured round this cell has one for. */
        Map<Integer, Double> byRound(String metric) {
            Map<Integer, Double> m = new HashMap<>();
            for (int i = 0; i < ok.size(); i++) {
                Double v = ok.get(i).metrics().get(metric);
                if (v != null && !Double.isNaN(v)) m.put(rounds.get(i), v);
            }
            return m;
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = parse(args);
        if (o.jfrDir != null) Files.createDirectories(o.jfrDir);
        Map<String, PeerProcess> procs = new HashMap<>();
        Map<String, String> versions = new LinkedHashMap<>();
        Map<Key, Cell> cells = new LinkedHashMap<>();
        for (BenchWorkload w : o.workloads) for (String p : o.peers) cells.put(new Key(w, p), new Cell());
        double startLoad = QuietGuard.waitForQuiet(Compare::loadavg, o.maxLoad, o.waitQuietSeconds, 5, s -> {
            try {
                Thread.sleep(s * 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        QuietGuard.Verdict verdict = QuietGuard.verdict(startLoad, o.maxLoad, o.quick, o.allowNoisy);
        if (verdict == QuietGuard.Verdict.REFUSE) {
            System.err.println(QuietGuard.refusal(startLoad, o.maxLoad, o.waitQuietSeconds));
            System.exit(2);
        }
        String loadStart = loadavg();
        double loadMin = Double.MAX_VALUE, loadMax = 0;
        List<Double> stealPerRound = new ArrayList<>();
        List<Double> vcpuSpreadPerRound = new ArrayList<>();
        int cpus = Runtime.getRuntime().availableProcessors();
        long[] cpuMeasured = null, cpuMeasuredEnd = null;
        long t0 = System.nanoTime();
        int total = o.warmup + o.rounds;
        try {
            for (int r = 0; r < total; r++) {
                boolean measured = r >= o.warmup;
                double load = Double.parseDouble(loadavg().split(" ")[0]);
                loadMin = Math.min(loadMin, load);
                loadMax = Math.max(loadMax, load);
                long[] cpuRound = QuietGuard.cpuTimes(procStat());
                if (measured && cpuMeasured == null) cpuMeasured = cpuRound;
                double roundSpread = Double.NaN; // the most uneven of the round's samples
                for (BenchWorkload w : o.workloads) {
                    // hog and timers measure latency, not JIT-compiled code: one warm-up round is enough.
                    boolean latency = w == BenchWorkload.HOG || w == BenchWorkload.TIMERS || w == BenchWorkload.WAKEUP;
                    if (!measured && latency && r < o.warmup - 1) continue;
                    // Each parked run is a fresh process: nothing of a warm-up would carry over.
                    if (!measured && w == BenchWorkload.PARKED) continue;
                    if (measured && cpus > 1) {
                        double spread = VcpuSpeed.spread(VcpuSpeed.measure(cpus));
                        if (Double.isNaN(roundSpread) || spread > roundSpread) roundSpread = spread;
                    }
                    long n = w.n(o.quick), m = w.m(o.quick);
                    int p = w.procs() == 1 ? 1 : o.procs;
                    for (int k = 0; k < o.peers.size(); k++) {
                        String peer = o.peers.get((k + r) % o.peers.size());
                        String outcome = runOne(o, procs, versions, peer, p, w, n, m, measured ? cells.get(new Key(w, peer)) : null,
                                r - o.warmup);
                        System.err.printf(Locale.ROOT, "[%s %d/%d] %-9s %-7s %s%n",
                                measured ? "round" : "warm ", measured ? r - o.warmup + 1 : r + 1,
                                measured ? o.rounds : o.warmup, w.id(), peer, outcome);
                    }
                }
                if (measured) {
                    cpuMeasuredEnd = QuietGuard.cpuTimes(procStat());
                    stealPerRound.add(QuietGuard.stealShare(cpuRound, cpuMeasuredEnd));
                    vcpuSpreadPerRound.add(roundSpread);
                }
            }
        } finally {
            for (PeerProcess pp : procs.values()) pp.close();
        }
        double minutes = (System.nanoTime() - t0) / 60e9;
        double steal = QuietGuard.stealShare(cpuMeasured, cpuMeasuredEnd);
        String md = report(o, cells, versions, loadStart, loadavg(), loadMin, loadMax, steal, stealPerRound,
                vcpuSpreadPerRound, minutes, verdict);
        System.out.println(md);
        if (o.write) {
            Files.createDirectories(o.out);
            String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmm"));
            Path file = o.out.resolve(stamp + (o.quick ? "-quick" : "")
                    + (verdict == QuietGuard.Verdict.NOISY ? "-noisy" : "") + ".md");
            Files.writeString(file, md);
            System.err.println("written " + file);
        }
        boolean failed = cells.values().stream().anyMatch(c -> !c.failures.isEmpty());
        System.exit(failed ? 1 : 0);
    }

    /** Runs one round of w on peer; returns the progress text. A null cell means warm-up. */
    private static String runOne(Options o, Map<String, PeerProcess> procs, Map<String, String> versions,
                                 String peer, int p, BenchWorkload w, long n, long m, Cell cell, int round) throws InterruptedException {
        String key = peer + "/" + p;
        String failure;
        PeerProcess fresh = null;
        try {
            PeerProcess pp = procs.get(key);
            if (w == BenchWorkload.PARKED) {
                // RSS only grows within a process (and with -Xms = -Xmx the JVM's heap is never
                // uncommitted): a baseline taken in a process that already ran 1M goroutines would
                // hide the parked goroutines' pages. One fresh process per parked run.
                pp = fresh = new PeerProcess(peer, p, o, o.parkedHeap, false, "-parked-" + System.nanoTime());
                versions.putIfAbsent(peer, pp.hello);
            } else if (pp == null) {
                pp = new PeerProcess(peer, p, o);
                procs.put(key, pp);
                versions.putIfAbsent(peer, pp.hello);
            }
            String line = pp.call("RUN " + w.id() + " " + n + " " + m, o.timeoutSeconds);
            if (line == null) {
                pp.process.destroyForcibly();
                if (pp != fresh) procs.remove(key);
                failure = "no answer within " + o.timeoutSeconds + " s (killed)";
            } else if (line.startsWith("OK ")) {
                Result r = Result.parse(line.substring(3));
                long want = w.expected(n, m);
                if (r.check() != want) {
                    failure = "WRONG check " + r.check() + ", want " + want;
                } else {
                    if (cell != null) cell.add(round, r);
                    return r.toLine();
                }
            } else {
                failure = line;
            }
        } catch (IOException | RuntimeException e) {
            failure = e.toString();
        } finally {
            if (fresh != null) fresh.close();
        }
        if (cell != null) cell.failures.add(failure);
        return "FAILED: " + failure;
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (a.length == 0) return Double.NaN;
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    /**
     * The spread of a cell's rounds: the largest distance of a round from the median, as a
     * fraction of the median (0.06 = every round within 6 % of the median); NaN with fewer than
     * two rounds or a zero median.
     */
    static double spread(List<Double> xs) {
        double med = median(xs);
        if (xs.size() < 2 || med == 0 || Double.isNaN(med)) return Double.NaN;
        double worst = 0;
        for (double x : xs) worst = Math.max(worst, Math.abs(x - med));
        return worst / Math.abs(med);
    }

    /** A table cell: the median and, with two rounds or more, its spread ("333 ±6%"). */
    static String withSpread(List<Double> xs) {
        String s = fmt(median(xs));
        double sp = spread(xs);
        if (!Double.isNaN(sp)) s += String.format(Locale.ROOT, " ±%.0f%%", sp * 100);
        return s;
    }

    static List<Double> valuesOf(Cell c, String metric) {
        if (c == null) return List.of();
        return c.ok.stream().map(r -> r.metrics().get(metric)).filter(v -> v != null && !Double.isNaN(v)).toList();
    }

    static Double medianOf(Cell c, String metric) {
        if (c == null || c.ok.isEmpty()) return null;
        return median(c.ok.stream().map(r -> r.metrics().get(metric)).toList());
    }

    /**
     * A ratio column: the median over the measured rounds of num's value divided by den's in the
     * same round, with the lowest and highest of those ratios ("0.63 (0.47–0.74)"). Within a round
     * the peers run one after another, seconds apart, so a round's ratio does not move when this
     * shared VM slows down or speeds up for a while (one round of a run measured every peer 2.5
     * times faster than the others), which a ratio of the two medians does. "∞" when den's median
     * is 0 (a hog latency of 0 in most rounds: the ratio of a round with a few ns is meaningless),
     * "—" when no round has both.
     */
    static String pairedRatio(Cell num, Cell den, String metric) {
        if (num == null || den == null) return "—";
        Map<Integer, Double> n = num.byRound(metric), d = den.byRound(metric);
        if (!n.isEmpty() && !d.isEmpty() && median(List.copyOf(d.values())) == 0) return "∞";
        List<Double> ratios = new ArrayList<>();
        boolean zeroDen = false;
        for (Map.Entry<Integer, Double> e : n.entrySet()) {
            Double g = d.get(e.getKey());
            if (g == null) continue;
            if (g == 0) {
                zeroDen = true;
            } else {
                ratios.add(e.getValue() / g);
            }
        }
        if (ratios.isEmpty()) return zeroDen ? "∞" : "—";
        String m = String.format(Locale.ROOT, "%.2f", median(ratios));
        if (ratios.size() < 2) return m;
        double lo = ratios.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        double hi = ratios.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        return String.format(Locale.ROOT, "%s (%.2f–%.2f)", m, lo, hi);
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) return "NaN";
        double a = Math.abs(v);
        if (a >= 100) return String.format(Locale.ROOT, "%.0f", v);
        if (a >= 10) return String.format(Locale.ROOT, "%.1f", v);
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static String label(BenchWorkload w, String metric) {
        return switch (w.id() + "/" + metric) {
            case "spawn/ns_op" -> "ns per goroutine";
            case "pingpong/ns_op" -> "ns per round trip";
            case "pingpong1p/ns_op" -> "ns per round trip, 1 P";
            case "prodcons/ns_op", "prodcons0/ns_op" -> "ns per message";
            case "chain/us_op" -> "µs per traversal";
            case "chain1p/us_op" -> "µs per traversal, 1 P";
            case "forkjoin/ms" -> "ms per fib(" + w.n(false) + ")";
            case "timers/total_ms" -> "total ms";
            case "timers/late_ms" -> "mean lateness ms";
            case "hog/p50_ms" -> "ticker lateness p50 ms";
            case "hog/p99_ms" -> "ticker lateness p99 ms";
            case "hog/max_ms" -> "ticker lateness max ms";
            case "select/ns_op" -> "ns per select";
            case "gosched/ns_op" -> "ns per round trip, 1 P";
            case "parked/heap_b" -> "heap after GC, B per parked goroutine";
            case "parked/rss_b" -> "RSS, B per parked goroutine";
            case "wakeup/p50_us" -> "wake-up from a platform thread p50 µs";
            case "wakeup/p99_us" -> "wake-up from a platform thread p99 µs";
            default -> metric;
        };
    }

    static String report(Options o, Map<Key, Cell> cells, Map<String, String> versions, String loadStart,
                         String loadEnd, double loadMin, double loadMax, double steal, List<Double> stealPerRound,
                         List<Double> vcpuSpreadPerRound, double minutes, QuietGuard.Verdict verdict) {
        StringBuilder sb = new StringBuilder();
        String now = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        sb.append("# gosched vs virtual threads, Kotlin coroutines and Go — ").append(now)
                .append(verdict == QuietGuard.Verdict.NOISY ? " (NOISY)" : "").append("\n\n");
        sb.append(QuietGuard.noisyNote(verdict, QuietGuard.oneMinute(loadStart), o.maxLoad));
        sb.append(VcpuSpeed.unevenWarning(vcpuSpreadPerRound));
        sb.append("- Machine: ").append(cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs, ").append(memTotal()).append("\n");
        sb.append(String.format(Locale.ROOT, "- Load average (1 min): %s at start, %s at end, %.2f..%.2f at round starts"
                + " (others build on the same cores)%n", loadStart.split(" ")[0], loadEnd.split(" ")[0], loadMin, loadMax));
        sb.append(QuietGuard.stealNote(steal, stealPerRound));
        sb.append(VcpuSpeed.note(vcpuSpreadPerRound));
        sb.append("- Parallelism: ").append(o.procs).append(" everywhere (gosched GOMAXPROCS, Go GOMAXPROCS, ")
                .append("jdk.virtualThreadScheduler.parallelism, kotlinx.coroutines.scheduler.core.pool.size);")
                .append(" the gosched, pingpong1p and chain1p workloads run on 1\n");
        for (String p : o.peers) {
            sb.append("- ").append(p).append(": ").append(versions.getOrDefault(p, "(did not start)"));
            Variant v = o.variants.get(p);
            if (v != null) sb.append("; a variant from ").append(v.jar).append(", JVM options ").append(v.jvmOpts);
            sb.append("\n");
        }
        sb.append("- JVM peers: JDK ").append(Runtime.version()).append(", -Xms=-Xmx=").append(o.heap)
                .append(", -XX:+AlwaysPreTouch, default GC; each peer in its own process").append(o.jvmOpts.isEmpty() ? "" : ", " + o.jvmOpts)
                .append("\n");
        if (o.workloads.contains(BenchWorkload.PARKED)) {
            sb.append("- parked: every run in a fresh peer process (RSS only grows within one), JVM peers -Xms=-Xmx=")
                    .append(o.parkedHeap).append("; heap = MemoryMXBean heap used right after System.gc() (a full,")
                    .append(" compacting G1 collection), repeated until stable; Go = HeapInuse+StackInuse after runtime.GC();")
                    .append(" RSS = VmRSS; heap less a baseline taken after ").append(io.gosched.bench.Measures.PARKED_WARMUP_PASSES)
                    .append(" warm-up passes of m goroutines (JIT-compiled frames), RSS less one taken at the start of the process\n");
        }
        if (o.workloads.contains(BenchWorkload.WAKEUP)) {
            sb.append("- wakeup: gap of 1-2 ms before each send, so every P/carrier is idle; Go's sender is a goroutine")
                    .append(" locked to its OS thread (Go has no thread outside its scheduler)\n");
        }
        if (!o.label.isEmpty()) sb.append("- Source: ").append(o.label).append("\n");
        sb.append(String.format(Locale.ROOT, "- Rounds: %d warm-up + %d measured, interleaved (peer order rotates each round);"
                + " median of the measured rounds; %s sizes; %.1f min in all%n", o.warmup, o.rounds, o.quick ? "QUICK" : "full", minutes));
        sb.append("- Sizes (n, m): ");
        List<String> sizes = new ArrayList<>();
        for (BenchWorkload w : o.workloads) sizes.add(w.id() + " " + w.n(o.quick) + (w.m(o.quick) != 0 ? "," + w.m(o.quick) : ""));
        sb.append(String.join("; ", sizes)).append("\n\n");
        sb.append("Lower is better everywhere. `peer/gosched` > 1 means gosched is ahead of that peer:"
                + " the median of the rounds' own ratios (peer's figure over gosched's in the same round), with the"
                + " lowest and highest in parentheses. ±: the largest distance of a measured round from the median.\n\n");

        List<String> others = o.peers.stream().filter(p -> !p.equals("gosched")).toList();
        boolean hasGosched = o.peers.contains("gosched");
        // Each variant's standing against virtual threads in the same run, next to gosched's.
        List<String> vtOver = o.peers.contains("vt")
                ? o.peers.stream().filter(p -> o.variants.containsKey(p)).toList() : List.of();
        sb.append("| workload | metric |");
        for (String p : o.peers) sb.append(' ').append(p).append(" |");
        if (hasGosched) for (String p : others) sb.append(' ').append(p).append("/gosched |");
        for (String p : vtOver) sb.append(" vt/").append(p).append(" |");
        sb.append("\n|---|---|");
        for (int i = 0; i < o.peers.size() + (hasGosched ? others.size() : 0) + vtOver.size(); i++) sb.append("---:|");
        sb.append('\n');
        for (BenchWorkload w : o.workloads) {
            for (String metric : w.metrics()) {
                sb.append("| ").append(w.id()).append(" | ").append(label(w, metric)).append(" |");
                for (String p : o.peers) {
                    Cell c = cells.get(new Key(w, p));
                    Double v = medianOf(c, metric);
                    String s = v == null ? "FAIL" : withSpread(valuesOf(c, metric));
                    if (!c.failures.isEmpty() && v != null) s += " (" + c.failures.size() + " failed)";
                    sb.append(' ').append(s).append(" |");
                }
                if (hasGosched) {
                    Cell g = cells.get(new Key(w, "gosched"));
                    for (String p : others) {
                        sb.append(' ').append(pairedRatio(cells.get(new Key(w, p)), g, metric)).append(" |");
                    }
                }
                for (String p : vtOver) {
                    sb.append(' ').append(pairedRatio(cells.get(new Key(w, "vt")), cells.get(new Key(w, p)), metric)).append(" |");
                }
                sb.append('\n');
            }
        }
        sb.append("\n<details><summary>Every measured round</summary>\n\n");
        for (Map.Entry<Key, Cell> e : cells.entrySet()) {
            Cell c = e.getValue();
            sb.append("- ").append(e.getKey().workload().id()).append(' ').append(e.getKey().peer()).append(": ");
            List<String> rs = new ArrayList<>();
            for (Result r : c.ok) rs.add(r.toLine());
            for (String f : c.failures) rs.add("FAILED " + f);
            sb.append(String.join(" | ", rs)).append('\n');
        }
        sb.append("\n</details>\n");
        return sb.toString();
    }

    /** /proc/stat, or null where there is none. */
    static String procStat() {
        try {
            return Files.readString(Path.of("/proc/stat"));
        } catch (IOException e) {
            return null;
        }
    }

    static String loadavg() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "? ? ?";
        }
    }

    static String cpuModel() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) return l.substring(l.indexOf(':') + 1).trim();
            }
        } catch (IOException ignored) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch");
    }

    static String memTotal() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (l.startsWith("MemTotal:")) {
                    long kb = Long.parseLong(l.replaceAll("\\D", ""));
                    return String.format(Locale.ROOT, "%.0f GiB RAM", kb / 1048576.0);
                }
            }
        } catch (IOException ignored) {
            // not Linux: fall through
        }
        return "? RAM";
    }
}
